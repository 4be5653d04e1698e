// Endpoint: how the scheduler reaches one worker (a chip or a SUB), wherever
// it lives. Implementations: LocalEndpoint (a forked child over a Mailbox)
// and FakeEndpoint (in-process, for the engine's unit tests).
//
// An endpoint holds up to depth() tasks at once (1 unless it queues them:
// LocalEndpoint holds a batch) and runs them in the order started. The
// scheduling thread alone calls start(), flush() and poll(); control() is called from the orchestrating thread and is
// serialised by the endpoint. Outcomes are explicit: a task either finished
// (its Status: OK or the task's own failure) or the endpoint failed (child
// died), and a failed endpoint stays failed: every later start() and
// control() fails fast with the same error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mailbox.hpp"
#include "taskring/base/clock.hpp"
#include "taskring/base/expected.hpp"
#include "taskring/tensor/task_args.hpp"

namespace taskring::node {

// One task as sent to a worker: what a chip or SUB child receives.
struct TaskPayload {
  int32_t callable = -1;
  std::vector<ChipTensor> tensors;
  std::vector<TensorArgType> tags;
  std::vector<uint64_t> scalars;
  // Set by the engine when it queues the task behind unfinished producers
  // on the same worker (depth() > 1): bit k means "run only if the task
  // started k+1 starts before this one on this endpoint succeeded";
  // otherwise the task is not run (OutcomeKind::kNotRun). 0: no condition.
  uint32_t after = 0;
  // Set by the engine for a task queued behind a group on its chips: the
  // node's GroupGate it must wait for, and the one its own group counts
  // down (mailbox.hpp); -1: none. Endpoints without queues ignore them.
  int32_t wait_gate = -1;
  int32_t done_gate = -1;
};

// kNotRun: the worker skipped the task, as TaskPayload::after asked.
enum class OutcomeKind : uint8_t { kSuccess, kTaskFailure, kEndpointFailure, kNotRun };

struct Outcome {
  OutcomeKind kind = OutcomeKind::kSuccess;
  Status status;
};

struct ControlRequest {
  ControlOp op = ControlOp::kNoop;
  uint64_t args[4] = {};
  // A file descriptor handed to the child with the request (a comm domain's
  // shared object); -1 for none. The child receives its own copy.
  int fd = -1;
};

class Endpoint {
 public:
  virtual ~Endpoint() = default;
  // "chip 3 (pid 1234)" for messages.
  virtual std::string name() const = 0;
  // How many tasks may be in flight at once (start() while fewer are).
  virtual int depth() const { return 1; }
  // Hands `task` to the worker. Precondition: fewer than depth() tasks in
  // flight. A failed endpoint returns its error.
  virtual Status start(uint64_t task_id, const TaskPayload& task) = 0;
  // The same, except that the worker is not woken: the caller publishes
  // everything it staged for this worker in one scheduling pass with one
  // flush(), and wakes the members of groups with one ring of the node's
  // group bell (Engine::launch), so they start together.
  // Endpoints without such a bell start the task (the default).
  // `countdown` >= 0 names a slot of the node's group countdowns that the
  // caller set to the number of members: a worker that finishes
  // successfully then wakes the caller only if it takes the slot to zero
  // (a failure always wakes it). The caller still polls every member, so an
  // endpoint may ignore the slot and wake it every time.
  virtual Status start_staged(uint64_t task_id, const TaskPayload& task, int32_t countdown) {
    (void)countdown;
    return start(task_id, task);
  }
  // A hint that a task for this worker comes soon: a worker that parks when
  // idle stays awake for a while instead (polling, yielding its CPU), so it
  // starts the task without a wake-up's latency. Like start_staged, it does
  // not wake the worker: the caller rings the node's group bell once for
  // every worker it hinted. The default ignores the hint.
  virtual void expect_work() {}
  // Publishes what start_staged() staged since the last flush as one batch:
  // `wake` rings the worker (false: the caller rang the node's group bell,
  // which reaches it). Endpoints whose start_staged starts at once ignore it.
  virtual void flush(bool wake) { (void)wake; }
  // The outcome of the oldest task in flight once it finished (or the
  // endpoint failed), nullopt while it runs. `check_liveness`: also look for a dead
  // child (a syscall; the scheduler asks at most every few ms).
  virtual std::optional<Outcome> poll(bool check_liveness) = 0;
  // Runs one control request synchronously; its result value.
  virtual Expected<uint64_t> control(const ControlRequest& req, Deadline deadline) = 0;
  // The same in two halves, so one thread can run a request on several
  // endpoints at once (comm domain members meet at a barrier inside it):
  // control_post() hands the request over, control_wait() collects it. The
  // calling thread must call control_wait() after every successful post and
  // make no other control call on this endpoint in between.
  virtual Status control_post(const ControlRequest& req) = 0;
  virtual Expected<uint64_t> control_wait(Deadline deadline) = 0;
  // OK while usable; the failure otherwise.
  virtual Status health() = 0;
  // A descriptor that turns readable when the worker's process ends (its
  // pidfd), so the engine learns of a death without polling; -1 when there
  // is none, and the engine then checks health() every few ms while busy.
  virtual int exit_fd() const { return -1; }
  // Called from the engine's exit watcher every quarter of the stall
  // timeout: a worker process seen stopped for `limit_ns` is killed, so
  // its death fails its task (NodeConfig::stall_timeout_ms). Thread-safe.
  virtual void watch_stall(uint64_t limit_ns, uint64_t now_ns, const std::string& knob) {
    (void)limit_ns;
    (void)now_ns;
    (void)knob;
  }
  // Called from the engine's exit watcher on each tick, for chips only: a
  // worker whose current task has run for `limit_ns` (counted from when the
  // worker started it, not from its dispatch) without an answer is killed,
  // so its death fails the task like any other (EngineConfig::
  // task_timeout_ms). It covers a chip whose serving thread is stuck inside
  // the task and so cannot end the run at its own run timeout. `limit`
  // names the settings. Thread-safe.
  virtual void watch_task(uint64_t limit_ns, uint64_t now_ns, const std::string& limit) {
    (void)limit_ns;
    (void)now_ns;
    (void)limit;
  }
};

}  // namespace taskring::node
