// Mailbox: the shared-memory region between the parent and one child.
//
// One Mailbox per child, in an anonymous shared mapping made before the fork.
// Two independent parts, so a control call (orchestrator thread) and a task
// (scheduler) never share a state word:
//   task queue:    kTaskSlots slots used round-robin in the order the parent
//                  fills them; each slot IDLE -> TASK_READY (parent) ->
//                  TASK_RUNNING -> TASK_DONE or TASK_NOT_RUN (child) -> IDLE
//                  (parent, after reading the result). The child runs the
//                  slots in order, so a batch of tasks costs one publish and
//                  one wake (LocalEndpoint::flush), and one reply.
//   control frame: IDLE -> CONTROL_REQUEST -> CONTROL_RUNNING -> CONTROL_DONE
//                  -> IDLE, same roles.
// Every state word is stored with release and loaded with acquire: the frame
// bytes written before a state change are visible to whoever sees the state.
// The child writes its result (code + message) before *_DONE. The shutdown
// word is sticky (0 -> 1, never cleared) so that a late *_DONE store can
// never hide a shutdown request. The parent rings `child_bell` after every
// change the child must see; the child rings the parent's bell (not in this
// struct: one bell for the whole node) after a control reply, at init, after
// a failed task and once its queue is empty (see ChildServer::serve_tasks).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "shm_bell.hpp"
#include "taskring/base/status.hpp"
#include "taskring/node/chip_run_totals.hpp"
#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::node {

inline constexpr int kMaxTaskTensors = 256;
inline constexpr int kMaxTaskScalars = 128;
inline constexpr size_t kMessageBytes = 512;  // error text carried per result (>= 256)

enum class InitState : uint32_t { kStarting = 0, kReady = 6, kFailed = 7 };
// A task queued in a child (TaskSlot): how many one child holds at once.
inline constexpr int kTaskSlots = 16;
// kNotRun: the child skipped the task because a task it must follow failed
// or was not run (TaskSlot::after).
enum class TaskState : uint32_t { kIdle = 0, kReady = 1, kDone = 2, kNotRun = 3, kRunning = 9 };
enum class ControlState : uint32_t { kIdle = 0, kRequest = 4, kDone = 5, kRunning = 10 };
enum class ControlOp : uint32_t {
  kNoop = 0,
  kMalloc = 1,
  kFree = 2,
  kCopyTo = 3,
  kCopyFrom = 4,
  kAttachDomain = 7,   // comm domain: map, zero the window, meet the other members (comm_domain.hpp)
  kReleaseDomain = 8,  // comm domain: unmap
};

// A Status as it crosses the process boundary: a code, then the message
// (truncated to kMessageBytes), which an OK status never touches.
void store_status(const Status& s, int32_t* code, uint32_t* length, char* message);
Status load_status(int32_t code, uint32_t length, const char* message);

struct WireResult {
  int32_t code = 0;  // StatusCode
  uint32_t length = 0;
  char message[kMessageBytes] = {};

  void store(const Status& s) { store_status(s, &code, &length, message); }
  Status load() const { return load_status(code, length, message); }
};

// A group queued on its chips (Engine::launch) counts its running members
// here, so that the group queued behind it on the same chips starts only
// once it finished everywhere (TaskSlot::wait_gate): queued collectives run
// one after another, as when each waited for idle chips. The parent sets
// both words before it queues the group; a member decrements `remaining`
// when it finishes (after raising `failed` if it did not succeed), and the
// one that takes it to zero, or fails, rings the node's group bell. The
// parent raises `failed` too when a member's child dies. A slot is reused
// only after every task that waits on it finished.
struct GroupGate {
  std::atomic<uint32_t> remaining{0};
  std::atomic<uint32_t> failed{0};
};
inline constexpr int kGroupGates = 64;

// One task of a child's queue: what a chip or SUB child runs, and its result.
struct alignas(64) TaskSlot {
  std::atomic<uint32_t> state{0};  // TaskState
  // >= 0: the node's group countdown slot this task counts down; the child
  // rings the parent's bell on success only when it takes the slot to zero
  // (Endpoint::start_staged). -1: the usual rule (see the top).
  int32_t countdown = -1;
  // Bit k set: this task needs the task queued k+1 slots before it (in this
  // child's order) to have succeeded; if that one failed or was not run,
  // this one is not run (TASK_NOT_RUN). TaskPayload::after.
  uint32_t after = 0;
  // >= 0: run only once GroupGate `wait_gate` opened (not run if it
  // failed); this task is a member of the group counted by `done_gate`.
  int32_t wait_gate = -1;
  int32_t done_gate = -1;
  int32_t callable = -1;
  int32_t tensor_count = 0;
  int32_t scalar_count = 0;
  uint64_t task_seq = 0;
  // mono_ns() when the child started running the task (after its group
  // gate opened), 0 while it waits for the gate; reset by the child before
  // it stores TASK_RUNNING. The parent's task watch reads it
  // (LocalEndpoint::watch_task) to kill a chip that cannot answer; a SUB
  // child, which is not watched, leaves it 0.
  std::atomic<uint64_t> started_ns{0};
  int32_t tags[kMaxTaskTensors] = {};
  ChipTensor tensors[kMaxTaskTensors];
  uint64_t scalars[kMaxTaskScalars] = {};
  WireResult result;
};

struct alignas(64) Mailbox {
  ShmBell child_bell;
  alignas(64) std::atomic<uint32_t> shutdown{0};
  std::atomic<uint32_t> init_state{0};
  // Set by the parent when a task for this child comes soon
  // (Endpoint::expect_work); the child clears it and stays awake.
  std::atomic<uint32_t> wake_hint{0};
  WireResult init_result;

  // ---- control frame: everything an OK round trip touches shares one
  // cache line (state, op, args, value, code); the message has its own ----
  alignas(64) std::atomic<uint32_t> control_state{0};
  ControlOp op = ControlOp::kNoop;
  uint64_t control_args[4] = {};
  uint64_t control_value = 0;
  int32_t control_code = 0;
  uint32_t control_length = 0;
  alignas(64) char control_message[kMessageBytes] = {};

  // ---- task queue (see the top) ----
  TaskSlot tasks[kTaskSlots];
  // Batches the parent published (LocalEndpoint::flush); parent only, read
  // and cleared by NodeWorker::take_chip_run_totals.
  uint64_t dispatches = 0;
  // Tasks the child finished (done or not run); it stores it with release
  // after each, so a reader that loads it with acquire sees run_totals.
  std::atomic<uint64_t> finished{0};
  // Written by a chip child after each chip run it finishes, read and
  // cleared by the parent between runs (NodeWorker::take_chip_run_totals).
  ChipRunTotals run_totals;
};

static_assert(offsetof(Mailbox, control_length) + sizeof(uint32_t) - offsetof(Mailbox, control_state) <= 64,
              "the control round trip must stay within one cache line");

inline TaskState load_task_state(const TaskSlot& t) {
  return static_cast<TaskState>(t.state.load(std::memory_order_acquire));
}
inline ControlState load_control_state(const Mailbox& m) {
  return static_cast<ControlState>(m.control_state.load(std::memory_order_acquire));
}
inline void store_task_state(TaskSlot& t, TaskState s) {
  t.state.store(static_cast<uint32_t>(s), std::memory_order_release);
}
inline void store_control_state(Mailbox& m, ControlState s) {
  m.control_state.store(static_cast<uint32_t>(s), std::memory_order_release);
}

// Called by a child after its TASK_DONE store: whether it must ring the
// parent's bell. Always, unless the task counts down group countdown `slot`
// (>= 0, see Mailbox::countdown): then only a failed task or the member
// that takes the slot to zero rings. The acq_rel decrement orders every
// member's TASK_DONE before the last member's ring.
inline bool finish_rings_parent(std::atomic<uint32_t>* countdowns, int32_t slot, bool ok) {
  if (slot < 0 || countdowns == nullptr) return true;
  const uint32_t before = countdowns[slot].fetch_sub(1, std::memory_order_acq_rel);
  return !ok || before == 1;
}

}  // namespace taskring::node
