// Running one block of a task on the sim cores, for every runtime: the
// launch itself is exec::launch_block; this adds the counters and the one
// KERNEL_FAILED wording:
//   "<task> kernel <id> (kernels{aic=.. aiv0=.. aiv1=..}, block b/n, core c)
//    failed with code <code>: <kernel's message>"
#pragma once

#include <cstdint>
#include <string>

#include "exec/kernel_launch.hpp"
#include "run_counters.hpp"

namespace taskring::l2 {

std::string block_failure_message(const std::string& task, const int32_t kernels[3], int block, int block_num,
                                  const exec::LaunchFailure& f);

// Runs block `block` of `task`. On a kernel error returns false and sets
// `*failure` to the message above, naming the task with `task_name()`.
template <typename NameFn>
bool run_block(const exec::LaunchTask& task, int block, const exec::LaunchPlace& place, Device& device,
               const taskring_kernel_fn* kernels, RunCounters& counters, NameFn&& task_name, std::string* failure) {
  exec::LaunchFailure f;
  if (exec::launch_block(task, block, place, device, kernels, counters.kernel_calls_of(place.executor), &f))
    return true;
  *failure = block_failure_message(task_name(), task.kernels, block, task.block_num, f);
  return false;
}

// Runs blocks [first, first + count) of `task` as one co-resident group
// (exec::launch_co_resident); the failure message names the failing block.
template <typename NameFn>
bool run_co_resident(const exec::LaunchTask& task, int first, int count, bool whole_task,
                     const exec::LaunchPlace& place, Device& device, const taskring_kernel_fn* kernels,
                     RunCounters& counters, NameFn&& task_name, std::string* failure) {
  exec::LaunchFailure f;
  if (exec::launch_co_resident(task, first, count, whole_task, place, device, kernels,
                               counters.kernel_calls_of(place.executor), &f)) {
    return true;
  }
  *failure = block_failure_message(task_name(), task.kernels, f.block, task.block_num, f);
  return false;
}

}  // namespace taskring::l2
