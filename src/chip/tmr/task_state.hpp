// Per-task state of the tensormap_and_ringbuffer runtime.
//
// A task lives in one slot of its ring's window from submit until it is
// CONSUMED (completed, its scope closed, every consumer that retains it done),
// then the ring's tail passes it and the orchestrator may reuse the slot.
//
// Counters (all start when the orchestrator initialises the slot):
//   fanin_pending   = 1 (submit guard) + producers not yet completed (while
//                     wiring: + every producer found, TmrRuntime::wire).
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
#include "taskring/chip/orchestration_api.hpp"
#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::tmr {

struct TaskSlot;

// One consumer on a producer's fanout list. Allocated from the consumer's
// ring dependency pool; reclaimed when the consumer retires.
struct DepNode {
  TaskSlot* consumer;
  DepNode* next;
};

inline constexpr int kMaxRetainedProducers = 96;

// `a -= v`, returning the new value. A run whose tasks all live on one
// thread (`alone`: TmrRuntime::tasks_here_) does it as a load and a store:
// no locked instruction, of which a task's life has about nine. Otherwise an
// acquire-release read-modify-write. Either way an atomic access.
template <typename T>
inline T sub_fetch(std::atomic<T>& a, T v, bool alone) {
  if (alone) {
    const T n = a.load(std::memory_order_relaxed) - v;
    a.store(n, std::memory_order_relaxed);
    return n;
  }
  return a.fetch_sub(v, std::memory_order_acq_rel) - v;
}

// TaskSlot::fanout once the task completed: the list is closed, no consumer
// may join. (Not a node address: nodes are 8-byte aligned.)
inline DepNode* const kFanoutClosed = reinterpret_cast<DepNode*>(uintptr_t{1});

// The slot embeds its dependency owner record (deps/owner.hpp) as its base:
// the TensorMap stores the Owner's address, and an owner handed back by a
// lookup is this slot (static_cast, no offset). Owner::seq is the ring
// sequence number (64-bit, never wraps), Owner::id the task id, and
// Owner::completed the completion as the TensorMap reads it (an entry of a
// completed task is dead); get/set_tensor_data waits for `fanout` to close.
//
// A slot is its header only (two cache lines); what a task carries beside it
// (tensor descriptors, scalars, retained producers) lives in its ring's
// argument pool (task_ring.hpp), packed in submission order. With the
// arrays inline a slot was 5 KiB, so a 16384-task window spanned 80 MiB:
// every submit and every execution touched a cold line of a page no
// prefetcher would cross, and mix8 cost 2-4x more under a busy neighbour
// (docs/benchmarks.md#l2-hot-path).
struct alignas(64) TaskSlot : deps::Owner {
  static TaskSlot* of(deps::Owner* o) { return static_cast<TaskSlot*>(o); }

  // ---- hot, shared between orchestrator and executors ----
  std::atomic<int32_t> fanin_pending{0};
  std::atomic<int32_t> release_pending{0};
  std::atomic<int32_t> next_block{0};   // SPMD: next block index to claim
  std::atomic<int32_t> blocks_done{0};  // SPMD: blocks finished
  std::atomic<bool> consumed{false};
  // The consumers waiting for this task, a list the orchestrator pushes onto
  // (compare-exchange) until the completion takes it whole and closes it
  // (exchange with kFanoutClosed): one atomic each, no lock.
  std::atomic<DepNode*> fanout{nullptr};

  // ---- written by the orchestrator before publication, read by executors ----
  l2::TaskShape shape = l2::TaskShape::kDummy;
  uint8_t ring = 0;
  int16_t block_num = 1;
  bool sync_start = false;  // require_sync_start: all blocks start together
  int32_t kernels[3] = {INVALID_KERNEL_ID, INVALID_KERNEL_ID, INVALID_KERNEL_ID};
  int32_t tensor_count = 0;
  int32_t scalar_count = 0;
  int32_t retained_count = 0;
  uint64_t heap_end = 0;  // heap top after this task's allocation (ring-relative)
  uint64_t dep_mark = 0;  // dependency-pool top after this task's submit
  uint64_t hot_arg_mark = 0;  // hot argument-pool top after this task's submit
  uint64_t arg_mark = 0;      // cold argument-pool top after this task's submit
  exec::ResolvedPredicate predicate;  // inactive unless the submit set one
  // In the ring's argument pool: tensor_count descriptors, then the scalars,
  // then the retained producers (ArgLayout).
  ChipTensor* tensors = nullptr;
  uint64_t* scalars = nullptr;
  TaskSlot** retained = nullptr;
};
static_assert(sizeof(TaskSlot) <= 192, "a task slot is its header: keep the window's footprint small");

// A task's share of its ring's argument pool, in 128-byte units (one tensor
// descriptor each; scalars and retained-producer pointers pack 16 to a unit).
struct ArgLayout {
  static constexpr uint64_t kPerUnit = sizeof(ChipTensor) / sizeof(uint64_t);  // 16
  static_assert(sizeof(TaskSlot*) == sizeof(uint64_t));
  // The most one task can take: every tensor, every scalar, every producer.
  static constexpr uint64_t kMaxUnits = CORE_MAX_TENSOR_ARGS + (CORE_MAX_SCALAR_ARGS + kPerUnit - 1) / kPerUnit +
                                        (kMaxRetainedProducers + kPerUnit - 1) / kPerUnit;
  uint64_t tensors, scalar_units, retained_units;
  static ArgLayout of(int tensors, int scalars, int retained) {
    return ArgLayout{static_cast<uint64_t>(tensors), (static_cast<uint64_t>(scalars) + kPerUnit - 1) / kPerUnit,
                     (static_cast<uint64_t>(retained) + kPerUnit - 1) / kPerUnit};
  }
  uint64_t units() const { return tensors + scalar_units + retained_units; }
};

}  // namespace taskring::tmr
