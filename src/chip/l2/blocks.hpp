// A task's blocks, for every runtime: claiming them (SPMD: a task of
// `block_num` blocks stays queued while blocks remain, so idle executors take
// blocks in parallel; the executor that finishes the last block completes
// the task) and running one on the sim cores. The launch itself is
// exec::launch_block; this adds the counters and the one KERNEL_FAILED
// wording:
//   "<task> kernel <id> (kernels{aic=.. aiv0=.. aiv1=..}, block b/n, core c)
//    failed with code <code>: <kernel's message>"
//
// `Task` has `std::atomic<int32_t> next_block, blocks_done` and a block_num.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "exec/kernel_launch.hpp"
#include "run_counters.hpp"

namespace taskring::l2 {

// Claims and runs one block of `t`: push(t) requeues it while blocks remain,
// run(block) runs one block (skipped by the caller after a fatal error),
// complete() runs once, after the last block. The claimer of block 0 first
// asks admit(): false retires the task at once without running any block
// (a dispatch predicate that is false), before another block is offered.
template <typename Task, typename Admit, typename Push, typename Run, typename Complete>
[[gnu::always_inline]] inline void run_one_block(Task* t, Admit&& admit, Push&& push, Run&& run, Complete&& complete) {
  // Read block_num before finishing a block: once another executor finishes
  // the last one, the task may complete and its slot be reused.
  const int32_t nblocks = t->block_num;
  if (nblocks == 1) {
    // A one-block task is queued once and popped by one executor: nothing
    // to claim or count, so no atomic read-modify-write (two per task).
    if (admit()) run(0);
    complete();
    return;
  }
  int32_t block = t->next_block.fetch_add(1, std::memory_order_acq_rel);
  if (block >= nblocks) return;
  if (block == 0 && !admit()) {
    complete();
    return;
  }
  if (block + 1 < nblocks) push(t);
  run(block);
  if (t->blocks_done.fetch_add(1, std::memory_order_acq_rel) + 1 == nblocks) complete();
}


std::string block_failure_message(const std::string& task, const int32_t kernels[3], int block, int block_num,
                                  const exec::LaunchFailure& f);

// Runs block `block` of `task`. On a kernel error returns false and sets
// `*failure` to the message above, naming the task with `task_name()`.
template <typename NameFn>
bool run_block(const exec::LaunchTask& task, int block, const exec::LaunchPlace& place, Device& device,
               const taskring_kernel_fn* kernels, std::atomic<uint64_t>& calls, NameFn&& task_name,
               std::string* failure) {
  exec::LaunchFailure f;
  if (exec::launch_block(task, block, place, device, kernels, calls, &f))
    return true;
  *failure = block_failure_message(task_name(), task.kernels, block, task.block_num, f);
  return false;
}

// Runs blocks [first, first + count) of `task` as one co-resident group
// (exec::launch_co_resident); the failure message names the failing block.
template <typename NameFn>
bool run_co_resident(const exec::LaunchTask& task, int first, int count, bool whole_task,
                     const exec::LaunchPlace& place, Device& device, const taskring_kernel_fn* kernels,
                     std::atomic<uint64_t>& calls, NameFn&& task_name, std::string* failure) {
  exec::LaunchFailure f;
  if (exec::launch_co_resident(task, first, count, whole_task, place, device, kernels, calls, &f)) {
    return true;
  }
  *failure = block_failure_message(task_name(), task.kernels, f.block, task.block_num, f);
  return false;
}

}  // namespace taskring::l2
