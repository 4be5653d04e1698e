// Scheduler-side state of an hbg run: one Runnable per image task (in the
// control processor's memory) and, per replayed Graph, one GraphExec with a
// Runnable per node (a state of the Definition's ReplayPool, replay_pool.hpp).
//
// fanin_pending starts at the task's fanin count; the Runnable is ready at 0.
// A node's ready counter is pending[index] of its GraphExec instead (one
// contiguous array, reset per replay by one copy). A node's completion
// releases its fanout inside its GraphExec; `remaining` counts the sinks
// (nodes without consumers) still to complete, and the last sink completes
// the outer GRAPH task. A `sequential` replay is run by one executor as a
// loop in node order, so its nodes release nobody.
#pragma once

#include <atomic>
#include <cstdint>

#include "exec/predicate.hpp"
#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::hbg {

struct GraphExec;
class ReplayPool;

enum class RunKind : uint8_t { kTask = 0, kGraph = 1, kNode = 2 };

struct alignas(64) Runnable {
  std::atomic<int32_t> fanin_pending{0};
  std::atomic<int32_t> next_block{0};
  std::atomic<int32_t> blocks_done{0};
  RunKind kind = RunKind::kTask;
  uint8_t shape = 3;  // l2::TaskShape
  int16_t block_num = 1;
  bool sync_start = false;  // require_sync_start: all blocks start together
  int32_t kernels[3] = {-1, -1, -1};
  int32_t tensor_count = 0, scalar_count = 0;
  const ChipTensor* tensors = nullptr;  // device views
  const uint64_t* scalars = nullptr;
  const uint32_t* fanout32 = nullptr;  // kTask / kGraph: indices into the task table
  const uint16_t* fanout16 = nullptr;  // kNode: indices into its GraphExec's nodes
  int32_t fanout_count = 0;
  uint32_t index = 0;
  GraphExec* exec = nullptr;          // kNode: owner
  uint64_t submission_addr = 0;       // kGraph
  exec::ResolvedPredicate predicate;  // kTask: inactive unless the submit set one
};

struct alignas(64) GraphExec {
  std::atomic<int32_t> remaining{0};
  uint32_t node_count = 0;
  bool sequential = false;
  // A spread replay whose time the pool's mode picker wants
  // (ReplayPool::next_loop): its start, 0 when untimed; and the process's
  // kernel waits then (exec::kernel_waits).
  uint64_t probe_start_ns = 0;
  uint64_t waits_at_start = 0;
  bool picked = false;  // the replay's way came from the picker: report its outcome
  Runnable* outer = nullptr;
  Runnable* nodes = nullptr;
  int32_t* pending = nullptr;  // per node; accessed through std::atomic_ref while the replay runs
  ChipTensor* tensors = nullptr;
  uint64_t* scalars = nullptr;
  ReplayPool* pool = nullptr;
  // What `tensors` were last bound to (ReplayPool::begin_replay).
  ChipTensor* bound_boundary = nullptr;
  uint64_t bound_heap_base = 0;
  bool bound = false;
};

// A replay's state lives in its Definition's ReplayPool (the control
// processor's memory), so a Definition asks for no execution storage in the
// replay heap: its header's storage_bytes is 0.
inline uint64_t execution_storage_bytes(uint32_t, uint32_t, uint32_t) { return 0; }

}  // namespace taskring::hbg
