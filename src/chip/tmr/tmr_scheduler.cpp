// The executors' side of tmr: pop, run (SPMD blocks), complete (release
// consumers, retire slots so the rings advance), finish the run.
#include "task_name.hpp"
#include "taskring/base/clock.hpp"
#include "tmr_runtime.hpp"

namespace taskring::tmr {

void TmrRuntime::execute(TaskSlot* t, int executor, engine::LocalReady<TaskSlot>* next_local) {
  counters_.mark_scheduled();
  execute_task(t, executor, next_local, [t] { return task_name(t->id); });
}

void TmrRuntime::complete(TaskSlot* t, engine::LocalReady<TaskSlot>* next_local) {
  t->fanout_lock.lock();
  t->fanout_closed = true;
  DepNode* n = t->fanout_head;
  t->fanout_head = nullptr;
  t->fanout_lock.unlock();
  // seq_cst: get/set_tensor_data waits for this flag (wake_on_completion_).
  t->completed.store(true, std::memory_order_seq_cst);
  if (wake_on_completion_.load(std::memory_order_seq_cst)) ring_progress_.notify_all_ordered();
  while (n != nullptr) {
    DepNode* next = n->next;  // read before the consumer may run and retire
    TaskSlot* c = n->consumer;
    if (c->fanin_pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      hand_off(c, next_local);
    }
    n = next;
  }
  for (int i = 0; i < t->retained_count; ++i) release(t->retained[i]);
  release(t);
  if (count_completion(next_local) == submitted_pub_.load(std::memory_order_acquire)) maybe_finish_run();
}

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
