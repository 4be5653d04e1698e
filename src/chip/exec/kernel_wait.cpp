#include "exec/kernel_wait.hpp"

#include <sched.h>

#include <atomic>

#include "taskring/base/clock.hpp"
#include "taskring/base/waiter.hpp"

namespace taskring::exec {

// One per executor thread: the launch that runs on it owns it.
constinit thread_local WaitContext t_wait_context;

namespace {
// Process-wide on purpose: a waiting kernel knows no chip, and a chip only
// asks whether the count moved during its run (another chip's wait in the
// meantime errs toward threaded, never toward a hang).
std::atomic<uint64_t> g_waits{0};
}  // namespace

uint64_t kernel_waits() { return g_waits.load(std::memory_order_relaxed); }

int32_t kernel_wait_yield(KernelLocalContext*, int32_t first_poll) {
  WaitContext& w = wait_context();
  if (first_poll != 0 && w.yield == nullptr) g_waits.fetch_add(1, std::memory_order_relaxed);
  uint64_t* deadline = w.current_deadline != nullptr ? w.current_deadline : &w.deadline_ns;
  const uint64_t now = mono_ns();
  if (first_poll != 0) *deadline = now + w.timeout_ns;
  if (now > *deadline) return 1;
  if (w.yield != nullptr) {
    w.yield(w.group);
  } else {
    // A sibling outside any group can only be on another executor thread:
    // give the hardware thread away now and then so it can run.
    static thread_local uint32_t polls = 0;
    if ((++polls & 31) == 0)
      sched_yield();
    else
      Waiter::cpu_relax();
  }
  return 0;
}

}  // namespace taskring::exec
