// RunGate: how a runtime starts and stops the executors of its runs.
//
// Executors are persistent threads, parked between runs. `open()` starts a
// run (a new generation, `active`), `close()` ends it. An executor counts
// itself in `inside_` while it works on a run, and checks `active` after
// counting itself (seq_cst on both sides), so once `quiesce()` has seen
// inside_ == 0 with the gate closed, no executor touches run state until the
// next open(): the runtime may then reset queues and task tables.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "taskring/base/clock.hpp"
#include "taskring/base/status.hpp"
#include "taskring/base/waiter.hpp"

namespace taskring::l2 {

class RunGate {
 public:
  // Runtime side.
  // Counts a thread that is not an executor (tmr's orchestrator) inside the
  // run about to open, so quiesce() also waits for it; that thread calls
  // leave() once it is done with the run. Without it, an orchestrator still
  // finishing run N could read run N+1's reset counters as "all done" and
  // close run N+1 before its orchestration started.
  void admit() { inside_.fetch_add(1, std::memory_order_seq_cst); }
  void open() {
    active_.store(true, std::memory_order_seq_cst);
    generation_.fetch_add(1, std::memory_order_seq_cst);
    work_.notify_all();
  }
  // Ends the run; true for the caller that actually closed it.
  bool close() {
    bool was = true;
    if (!active_.compare_exchange_strong(was, false, std::memory_order_seq_cst)) return false;
    work_.notify_all();
    return true;
  }
  // Waits until no executor is inside a run. Precondition: closed.
  Status quiesce(Deadline deadline) {
    return idle_.wait([this] { return inside_.load(std::memory_order_seq_cst) == 0; }, deadline,
                      "the executors to leave the previous run");
  }
  void shut_down() {
    shutdown_.store(true, std::memory_order_seq_cst);
    work_.notify_all();
  }
  // Wakes executors parked waiting for work.
  void notify_work() { work_.notify_all(); }
  // The same right after a ReadyQueue::push, whose seq_cst tail update
  // orders it before the look at the parked count (Waiter::notify_all_ordered);
  // a parking executor re-checks the queues (has_ready) after announcing itself.
  // No wake while an executor is searching (polling the queues): it will
  // find the item, because it clears its flag (seq_cst) before it announces
  // a park and re-checks the queues after that. Waking a parked executor
  // for a task a searching one then took was a futex wake per chained task.
  void notify_work_after_push() {
    work_.notify_all_ordered_unless([this] { return anyone_searching(); });
  }
  // Sizes the per-executor search flags; before the executors start.
  void set_executors(int n) {
    search_ = std::make_unique<SearchFlag[]>(static_cast<size_t>(n));
    search_count_ = n;
  }

  // Executor side.
  bool active() const { return active_.load(std::memory_order_acquire); }
  bool shutting_down() const { return shutdown_.load(std::memory_order_acquire); }
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // Enters the current run; false (and not entered) when the gate is closed.
  bool enter() {
    inside_.fetch_add(1, std::memory_order_seq_cst);
    if (active_.load(std::memory_order_seq_cst)) return true;
    leave();
    return false;
  }
  void leave() {
    if (inside_.fetch_sub(1, std::memory_order_seq_cst) == 1) idle_.notify_all();
  }
  Waiter& work() { return work_; }
  // Executor `e` starts or stops polling the queues for work (its own cache
  // line; written twice per idle spell, read only by pushers that found a
  // parked executor).
  void set_searching(int e, bool on) { search_[e].on.store(on ? 1 : 0, std::memory_order_seq_cst); }

 private:
  struct alignas(64) SearchFlag {
    std::atomic<uint32_t> on{0};
  };
  bool anyone_searching() const {
    for (int e = 0; e < search_count_; ++e) {
      if (search_[e].on.load(std::memory_order_seq_cst) != 0) return true;
    }
    return false;
  }
  std::unique_ptr<SearchFlag[]> search_;
  int search_count_ = 0;
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> shutdown_{false};
  std::atomic<bool> active_{false};
  std::atomic<int32_t> inside_{0};
  Waiter work_;
  Waiter idle_;
};

}  // namespace taskring::l2
