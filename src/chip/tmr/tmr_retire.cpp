// Retirement, the executors' last step on a task: release() drops a
// reference; the last one marks the slot CONSUMED, advances its ring over
// every consecutive consumed slot (TaskRing::advance, publishing the heap,
// dependency-pool and argument-pool tails with it) and wakes an orchestrator
// waiting for that much room.
#include "task_name.hpp"
#include "task_ring.hpp"
#include "tmr_runtime.hpp"

namespace taskring::tmr {


bool TaskRing::advance() {
  bool moved = false;
  while (true) {
    if (advance_lock.exchange(true, std::memory_order_seq_cst)) return moved;
    uint64_t alive = last_alive.load(std::memory_order_relaxed);
    uint64_t end = published_seq.load(std::memory_order_acquire);
    uint64_t heap_to = 0, pool_to = 0, hot_to = 0, arg_to = 0;
    bool any = false;
    while (alive < end && slot(alive).consumed.load(std::memory_order_acquire)) {
      TaskSlot& s = slot(alive);
      heap_to = s.heap_end;
      pool_to = s.dep_mark;
      hot_to = s.hot_arg_mark;
      arg_to = s.arg_mark;
      any = true;
      ++alive;
    }
    if (any) {
      // The tails themselves, not through the pools (whose line the
      // orchestrator writes on every submit).
      advance_tail(heap_tail, heap_to);
      advance_tail(pool_tail, pool_to);
      advance_tail(hot_arg_tail, hot_to);
      advance_tail(arg_tail, arg_to);
      last_alive.store(alive, std::memory_order_release);
      moved = true;
    }
    advance_lock.store(false, std::memory_order_release);
    // A slot consumed while we held the lock would otherwise wait for the
    // next retirement; re-check once we have released it. The fence keeps the
    // re-check from being ordered before the unlock (Dekker with the thread
    // that set `consumed` and then found the lock taken): without it both
    // can miss, and the ring stalls with its oldest task consumed.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    end = published_seq.load(std::memory_order_acquire);
    if (!(alive < end && slot(alive).consumed.load(std::memory_order_acquire))) return moved;
  }
}


std::string TmrRuntime::task_name(const TaskSlot* t) const { return tmr::task_name(t->id); }

void TmrRuntime::release(TaskSlot* t) {
  if (t->release_pending.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // Once `consumed` is set the ring may pass the slot and the orchestrator
  // reuse it: read the ring before (TSan found the read after).
  TaskRing& ring = rings_[t->ring];
  t->consumed.store(true, std::memory_order_seq_cst);
  advance_ring(ring);
}

bool TmrRuntime::release_deferred(TaskSlot* t) {
  if (t->release_pending.fetch_sub(1, std::memory_order_acq_rel) != 1) return false;
  t->consumed.store(true, std::memory_order_release);
  return true;
}

void TmrRuntime::advance_ring(TaskRing& ring) {
  // advance() ends with a seq_cst fence after moving last_alive, so a waiter
  // that set wake_at after this load reads the new last_alive itself. One
  // retirement claims the wake (the exchange): until the woken orchestrator
  // runs, later retirements would each pay a futex call for nobody.
  if (ring.advance()) {
    uint64_t want = ring.wake_at.load(std::memory_order_seq_cst);
    if (ring.last_alive.load(std::memory_order_relaxed) >= want &&
        ring.wake_at.compare_exchange_strong(want, kNoWaiter, std::memory_order_seq_cst)) {
      ring_progress_.notify_all_ordered();
    }
  }
}

}  // namespace taskring::tmr
