// Per-task state of the tensormap_and_ringbuffer runtime.
//
// A task lives in one slot of its ring's window from submit until it is
// CONSUMED (completed, its scope closed, every consumer that retains it done),
// then the ring's tail passes it and the orchestrator may reuse the slot.
//
// Counters (all start when the orchestrator initialises the slot):
//   fanin_pending   = 1 (submit guard) + producers not yet completed.
//                     The task is ready when it reaches 0.
//   release_pending = 1 (its scope) + 1 (its own completion) + retaining
//                     consumers. The task is CONSUMED when it reaches 0; a new
//                     retaining consumer may pin it only while it is non-zero.
#pragma once

#include <atomic>
#include <cstdint>

#include "deps/owner.hpp"
#include "l2/task_shape.hpp"
#include "exec/predicate.hpp"
#include "taskring/base/waiter.hpp"
#include "taskring/chip/orchestration_api.hpp"
#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::tmr {

// Test-and-test-and-set lock for the short fanout critical sections.
class SpinLock {
 public:
  void lock() {
    while (flag_.exchange(true, std::memory_order_acquire)) {
      while (flag_.load(std::memory_order_relaxed)) Waiter::cpu_relax();
    }
  }
  void unlock() { flag_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> flag_{false};
};

struct TaskSlot;

// One consumer on a producer's fanout list. Allocated from the consumer's
// ring dependency pool; reclaimed when the consumer retires.
struct DepNode {
  TaskSlot* consumer;
  DepNode* next;
};

inline constexpr int kMaxRetainedProducers = 96;

// The slot embeds its dependency owner record (deps/owner.hpp) as its base:
// the TensorMap stores the Owner's address, and an owner handed back by a
// lookup is this slot (static_cast, no offset). Owner::seq is the ring
// sequence number (64-bit, never wraps), Owner::id the task id, and
// Owner::completed the completion, readable without the fanout lock (set
// with seq_cst: get/set_tensor_data waits on it).
struct alignas(64) TaskSlot : deps::Owner {
  static TaskSlot* of(deps::Owner* o) { return static_cast<TaskSlot*>(o); }

  // ---- hot, shared between orchestrator and executors ----
  std::atomic<int32_t> fanin_pending{0};
  std::atomic<int32_t> release_pending{0};
  std::atomic<int32_t> next_block{0};   // SPMD: next block index to claim
  std::atomic<int32_t> blocks_done{0};  // SPMD: blocks finished
  SpinLock fanout_lock;
  bool fanout_closed = false;  // completed; guarded by fanout_lock (no consumer may join)
  std::atomic<bool> consumed{false};
  DepNode* fanout_head = nullptr;  // guarded by fanout_lock

  // ---- written by the orchestrator before publication, read by executors ----
  l2::TaskShape shape = l2::TaskShape::kDummy;
  uint8_t ring = 0;
  int16_t block_num = 1;
  bool sync_start = false;  // require_sync_start: all blocks start together
  int32_t kernels[3] = {INVALID_KERNEL_ID, INVALID_KERNEL_ID, INVALID_KERNEL_ID};
  int32_t tensor_count = 0;
  int32_t scalar_count = 0;
  uint64_t heap_end = 0;  // heap top after this task's allocation (ring-relative)
  uint64_t dep_mark = 0;  // dependency-pool head after this task's submit
  int32_t retained_count = 0;
  exec::ResolvedPredicate predicate;  // inactive unless the submit set one
  TaskSlot* retained[kMaxRetainedProducers];
  ChipTensor tensors[CORE_MAX_TENSOR_ARGS];
  uint64_t scalars[CORE_MAX_SCALAR_ARGS];
};

}  // namespace taskring::tmr
