// The executors' side of tmr: pop, run (SPMD blocks), complete (release
// consumers, retire slots so the rings advance), finish the run.
#include "task_name.hpp"
#include "taskring/base/clock.hpp"
#include "tmr_runtime.hpp"

namespace taskring::tmr {

std::string TmrRuntime::task_name(const TaskSlot* t) const { return tmr::task_name(t->id); }

void TmrRuntime::release(TaskSlot* t) {
  if (t->release_pending.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // Once `consumed` is set the ring may pass the slot and the orchestrator
  // reuse it: read the ring before (TSan found the read after).
  TaskRing& ring = rings_[t->ring];
  t->consumed.store(true, std::memory_order_seq_cst);
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
