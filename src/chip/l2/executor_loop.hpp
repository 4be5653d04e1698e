// The executor thread of an L2 runtime on sim: the control processor's
// scheduler and the cores in one loop.
//
// Between runs it parks on the gate. In a run it pops a ready item, executes
// it (RuntimeBase::execute: start, kernels, finish; a completion may leave one
// newly ready consumer in `local.next`, run without a queue round trip so a
// dependency chain stays on one thread; l2/local_ready.hpp), and when idle spins a while
// (yielding, so a runnable orchestrator sharing the hardware thread is not
// starved: a futex wake costs more than the tasks it would deliver), then
// parks until new work or the run's end.
//
// `Sched` provides:
//   Item* pop_ready(LocalReady<Item>&);   // own queue, shared queues, steal
//   void execute(Item*, int executor, LocalReady<Item>*);
//   bool has_ready() const;   // any queue non-empty (a hint)
//   void on_idle(LocalReady<Item>&);  // a poll found nothing: publish the
//                                     // executor's completions, check the end
#pragma once

#include <sched.h>

#include <cstdint>

#include "local_ready.hpp"
#include "run_gate.hpp"

namespace taskring::l2 {

// Idle polls before an executor parks (~100 µs with yields on the build
// machines).
inline constexpr uint32_t kIdleSpins = 4096;

template <typename Sched>
void executor_loop(RunGate& gate, Sched& sched, int index) {
  uint64_t seen = 0;
  while (!gate.shutting_down()) {
    uint64_t gen = gate.generation();
    if (gen == seen || !gate.active()) {
      uint32_t epoch = gate.work().begin_park();
      if (gate.shutting_down() || (gate.generation() != seen && gate.active())) {
        gate.work().cancel_park();
        continue;
      }
      gate.work().finish_park(epoch, 50'000'000);
      continue;
    }
    if (!gate.enter()) continue;
    seen = gen;
    LocalReady<typename Sched::Item> local;
    local.executor = index;
    uint32_t idle = 0;
    bool searching = false;  // RunGate::set_searching: pushers skip the wake
    while (gate.active()) {
      auto* item = local.next != nullptr ? local.next : sched.pop_ready(local);
      local.next = nullptr;
      if (item != nullptr) {
        if (searching) gate.set_searching(index, searching = false);
        idle = 0;
        sched.execute(item, index, &local);
        continue;
      }
      if (!searching) gate.set_searching(index, searching = true);
      sched.on_idle(local);
      if (++idle < kIdleSpins) {
        if ((idle & 31) == 0)
          sched_yield();
        else
          Waiter::cpu_relax();
        continue;
      }
      gate.set_searching(index, searching = false);  // before the park is announced
      uint32_t epoch = gate.work().begin_park();
      if (!gate.active() || sched.has_ready()) {
        gate.work().cancel_park();
        continue;
      }
      gate.work().finish_park(epoch, 2'000'000);
    }
    if (searching) gate.set_searching(index, false);
    sched.on_idle(local);  // a run closed early (fatal) still counts what this executor completed
    gate.leave();
  }
}

}  // namespace taskring::l2
