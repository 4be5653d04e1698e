// SPMD block claiming, shared by the runtimes: a task of `block_num` blocks
// stays queued while blocks remain, so idle executors take blocks in
// parallel; the executor that finishes the last block completes the task.
//
// `Task` has `std::atomic<int32_t> next_block, blocks_done` and a block_num.
#pragma once

#include <atomic>
#include <cstdint>

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

}  // namespace taskring::l2
