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
  // Opens a run without waking anyone (RunRequest::orchestrate_here):
  // executors parked between runs stay parked, and the first push after it
  // wakes nobody either (it is only noted): the opener runs that task itself
  // or calls end_quiet() and wakes them. Executors re-check the generation
  // when woken (or at their 50 ms look), so a quiet run is never missed.
  void open_quiet() {
    deferred_.store(false, std::memory_order_relaxed);
    quiet_.store(true, std::memory_order_relaxed);
    active_.store(true, std::memory_order_seq_cst);
    generation_.fetch_add(1, std::memory_order_seq_cst);
  }
  // Ends the quiet start; true when a push since open_quiet() woke nobody.
  bool end_quiet() {
    quiet_.store(false, std::memory_order_relaxed);
    return deferred_.exchange(false, std::memory_order_acq_rel);
  }
  // The opener is about to block (a full ring, a tensor wait): whoever must
  // run the task it made ready is woken now.
  void wake_if_deferred() {
    if (quiet_.load(std::memory_order_relaxed) || deferred_.load(std::memory_order_relaxed))
      if (end_quiet()) work_.notify_all();
  }
  void wake_all() { work_.notify_all(); }
  // Ends the run; true for the caller that actually closed it.
  bool close() {
    bool was = true;
    if (!active_.compare_exchange_strong(was, false, std::memory_order_seq_cst)) return false;
    // Only a thread inside the run waits for its end; one parked between
    // runs needs no wake (an enter() racing this sees active_ false).
    if (inside_.load(std::memory_order_seq_cst) != 0) work_.notify_all();
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
  // Wakes executors parked waiting for work. Only threads inside the run
  // wait for its work (one between runs waits for the next open()), so a run
  // that no executor entered (a quiet one) wakes nobody.
  void notify_work() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (inside_.load(std::memory_order_seq_cst) != 0) work_.notify_all();
  }
  // The same right after a ReadyQueue::push, whose seq_cst tail update
  // orders it before the look at the parked count (Waiter::notify_all_ordered);
  // a parking executor re-checks the queues (has_ready) after announcing itself.
  // No wake while an executor is searching (polling the queues): it will
  // find the item, because it clears its flag (seq_cst) before it announces
  // a park and re-checks the queues after that. Waking a parked executor
  // for a task a searching one then took was a futex wake per chained task.
  // After open_quiet(), the first push only notes itself (end_quiet).
  void notify_work_after_push() {
    if (quiet_.load(std::memory_order_relaxed) && quiet_.exchange(false, std::memory_order_relaxed)) {
      deferred_.store(true, std::memory_order_release);
      return;
    }
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
  // open_quiet(): the next push wakes nobody (read by every push; written
  // once per quiet run and by the push that takes it), and whether one did.
  std::atomic<bool> quiet_{false};
  std::atomic<bool> deferred_{false};
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> shutdown_{false};
  std::atomic<bool> active_{false};
  std::atomic<int32_t> inside_{0};
  Waiter work_;
  Waiter idle_;
};

}  // namespace taskring::l2
