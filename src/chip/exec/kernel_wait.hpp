// The runtime half of the kernel wait primitives (taskring/kernels/
// kernel_sync.h): KernelGlobalContext::wait_yield on sim.
//
// A kernel polling a word calls the hook between polls. Inside a
// co-resident group (co_resident.hpp) the hook switches to the group's next
// kernel; outside one it relaxes the CPU so a sibling on another executor can
// run. Either way it enforces the deadline: a wait longer than the launch's
// wait timeout makes the hook return non-zero.
#pragma once

#include <cstdint>

#include "taskring/kernels/kernel_abi.h"

namespace taskring::exec {

// The hook kernels see in KernelGlobalContext::wait_yield.
int32_t kernel_wait_yield(KernelLocalContext* ctx, int32_t first_poll);

// Waits begun outside a co-resident group since the process started, by any
// chip of it: such a kernel waits for a sibling on another executor, which an
// inline run never has (RunModePicker keeps its callable threaded).
uint64_t kernel_waits();

// Per executor thread: how a wait on this thread yields and how long it may
// last. Set by the launch for the duration of a kernel call (or a group).
struct WaitContext {
  uint64_t timeout_ns = 0;
  // When non-null, called to let the other kernels of the group run.
  void (*yield)(void* group) = nullptr;
  void* group = nullptr;
  // Deadline of the wait in progress on this thread outside a group (a
  // group keeps one per kernel).
  uint64_t deadline_ns = 0;
  // Inside a group: the current kernel's deadline slot.
  uint64_t* current_deadline = nullptr;
};

// The calling thread's context (thread-local: each executor runs its own
// kernels; no state is shared between threads). Constant-initialised, so an
// access from another file is a plain TLS load (every launch sets it).
extern constinit thread_local WaitContext t_wait_context;
inline WaitContext& wait_context() { return t_wait_context; }

}  // namespace taskring::exec
