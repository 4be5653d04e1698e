// LocalReady: what one executor carries from task to task so that work made
// ready by its own completions stays on it (oneTBB's continuation bypass and
// per-thread deques, for the sim L2 engine).
//
// A completion hands each newly ready consumer to RuntimeBase::hand_off():
// the first becomes `next`, run by the same executor without a queue round
// trip (the immediate successor); the others go to the executor's own ready
// queue, which it pops before the shared ones and from which idle executors
// steal. Both executors then work mostly on queue lines only they write,
// instead of pushing and popping one shared queue per task.
//
// Fairness bound: `since_shared` counts the tasks this executor took without
// looking at the shared queues (bypass or own queue). At kSharedEvery, the
// bypass is refused (the successor is queued on the own queue) and the next
// pop looks at the shared queues first, so orchestrator submissions and
// requeued SPMD blocks wait at most kSharedEvery tasks behind a local chain.
//
// Completions: an executor counts them in `unpublished` and adds them to the
// run's shared counter every kPublishEvery tasks and whenever it finds no
// work (RuntimeBase::count_completion / publish_completions). The shared
// counter decides the end of a run, and the end can only come when no task
// is left to run, which is exactly when every executor is idle and has
// published; meanwhile no cache line is written by every completion.
#pragma once

#include <cstdint>

namespace taskring::l2 {

inline constexpr uint32_t kSharedEvery = 64;
inline constexpr uint32_t kPublishEvery = 64;

template <typename Item>
struct LocalReady {
  Item* next = nullptr;  // the immediate successor, run next
  int executor = -1;     // owner index; -1: not an executor (its extras go to the shared queues)
  int lane = 0;          // its RunCounters lane: each thread that runs kernels writes its own
  uint32_t since_shared = 0;
  uint32_t unpublished = 0;  // completions not yet in RunCounters::completed
};

}  // namespace taskring::l2
