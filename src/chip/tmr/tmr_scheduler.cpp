// The executors' side of tmr: pop, run (SPMD blocks), complete (release
// consumers, retire slots so the rings advance), finish the run.
#include "engine/block_runner.hpp"
#include "engine/spmd.hpp"
#include "task_name.hpp"
#include "taskring/base/clock.hpp"
#include "tmr_runtime.hpp"

namespace taskring::tmr {

TaskSlot* TmrRuntime::pop_ready() {
  for (int q : engine::kPopOrder) {
    if (TaskSlot* t = queues_[q].pop()) return t;
  }
  return nullptr;
}

bool TmrRuntime::has_ready() const {
  for (const auto& q : queues_) {
    if (!q.empty_hint()) return true;
  }
  return false;
}

void TmrRuntime::push_ready(TaskSlot* t) {
  queues_[static_cast<int>(t->shape)].push(t);
  gate_.notify_work();
}

void TmrRuntime::execute(TaskSlot* t, int executor, TaskSlot** next_local) {
  counters_.mark_scheduled();
  if (t->shape == engine::TaskShape::kDummy) {
    complete(t, next_local);
    return;
  }
  engine::run_one_block(
      t, [this](TaskSlot* s) { push_ready(s); },
      [&](int block) {
        if (is_fatal()) return;
        exec::LaunchTask task{t->tensors, t->tensor_count, t->scalars, t->scalar_count, t->kernels, t->block_num};
        std::string failure;
        if (!engine::run_block(task, block, exec::LaunchPlace{executor, executors_, topo_}, *config_.device,
                               request_.kernels, counters_, [t] { return task_name(t->id); }, &failure)) {
          report_fatal(PTO2_ERROR_KERNEL_FAILED, failure);
        }
      },
      [&] { complete(t, next_local); });
}

void TmrRuntime::complete(TaskSlot* t, TaskSlot** next_local) {
  t->fanout_lock.lock();
  t->completed = true;
  DepNode* n = t->fanout_head;
  t->fanout_head = nullptr;
  t->fanout_lock.unlock();
  t->completed_flag.store(true, std::memory_order_release);
  while (n != nullptr) {
    DepNode* next = n->next;  // read before the consumer may run and retire
    TaskSlot* c = n->consumer;
    if (c->fanin_pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      if (*next_local == nullptr) *next_local = c;
      else push_ready(c);
    }
    n = next;
  }
  for (int i = 0; i < t->retained_count; ++i) release(t->retained[i]);
  release(t);
  if (counters_.mark_completed() == submitted_pub_.load(std::memory_order_acquire)) maybe_finish_run();
}

void TmrRuntime::release(TaskSlot* t) {
  if (t->release_pending.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  t->consumed.store(true, std::memory_order_seq_cst);
  if (rings_[t->ring].advance()) ring_progress_.notify_all();
}

}  // namespace taskring::tmr
