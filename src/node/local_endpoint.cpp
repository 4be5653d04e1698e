#include "local_endpoint.hpp"

#include <unistd.h>

#include <cstring>

#include "fd_passing.hpp"

namespace taskring::node {

LocalEndpoint::LocalEndpoint(Mailbox* mailbox, ShmBell* parent_bell, std::shared_ptr<ChildProcess> child,
                             int comm_socket)
    : m_(mailbox), parent_bell_(parent_bell), child_(std::move(child)), comm_socket_(comm_socket) {}

LocalEndpoint::~LocalEndpoint() {
  if (comm_socket_ >= 0) close(comm_socket_);
}

void LocalEndpoint::fail(Status s) {
  std::lock_guard<std::mutex> lk(fail_mu_);
  if (failed_.load(std::memory_order_relaxed)) return;
  failure_ = std::move(s);
  failed_.store(true, std::memory_order_release);
}

Status LocalEndpoint::health() {
  if (!failed_.load(std::memory_order_acquire)) {
    Status c = child_->check();
    if (c.ok()) return c;
    fail(c);
  }
  std::lock_guard<std::mutex> lk(fail_mu_);
  return failure_;
}

Status LocalEndpoint::start(uint64_t task_id, const TaskPayload& task) {
  Status s = start_staged(task_id, task, -1);
  if (s.ok()) flush(true);
  return s;
}

void LocalEndpoint::flush(bool wake) {
  if (!staged_) return;
  staged_ = false;
  ++m_->dispatches;
  if (wake) bell_ring(m_->child_bell);
}

Status LocalEndpoint::start_staged(uint64_t task_id, const TaskPayload& task, int32_t countdown) {
  if (failed_.load(std::memory_order_acquire)) return health();
  if (task.tensors.size() > static_cast<size_t>(kMaxTaskTensors) ||
      task.scalars.size() > static_cast<size_t>(kMaxTaskScalars))
    return invalid_argument("task has " + std::to_string(task.tensors.size()) + " tensors and " +
                            std::to_string(task.scalars.size()) + " scalars; a mailbox carries at most " +
                            std::to_string(kMaxTaskTensors) + " and " + std::to_string(kMaxTaskScalars));
  if (tail_ - head_ >= static_cast<uint64_t>(kTaskSlots))
    return failed_precondition(name() + ": task queue full (" + std::to_string(kTaskSlots) + " tasks in flight)");
  TaskSlot& m = m_->tasks[tail_ % kTaskSlots];
  m.task_seq = task_id;
  m.countdown = countdown;
  m.after = task.after;
  m.wait_gate = task.wait_gate;
  m.done_gate = task.done_gate;
  m.callable = task.callable;
  m.tensor_count = static_cast<int32_t>(task.tensors.size());
  m.scalar_count = static_cast<int32_t>(task.scalars.size());
  for (size_t i = 0; i < task.tensors.size(); ++i) {
    m.tensors[i] = task.tensors[i];
    m.tags[i] = static_cast<int32_t>(task.tags[i]);
  }
  if (!task.scalars.empty()) std::memcpy(m.scalars, task.scalars.data(), task.scalars.size() * sizeof(uint64_t));
  store_task_state(m, TaskState::kReady);
  ++tail_;
  staged_ = true;
  return Status::Ok();
}

void LocalEndpoint::watch_task(uint64_t limit_ns, uint64_t now_ns, const std::string& limit) {
  // The child runs one slot at a time; whichever is TASK_RUNNING is it.
  // A slot reused between the two loads shows a later start: never an
  // earlier kill.
  for (TaskSlot& t : m_->tasks) {
    if (load_task_state(t) != TaskState::kRunning) continue;
    const uint64_t started = t.started_ns.load(std::memory_order_acquire);
    if (started == 0 || now_ns < started || now_ns - started < limit_ns) continue;
    (void)child_->kill_for("ran one chip task for " + std::to_string((now_ns - started) / 1'000'000) +
                           " ms without an answer, past " + limit + "; killed it");
    return;
  }
}

std::optional<Outcome> LocalEndpoint::poll(bool check_liveness) {
  if (head_ == tail_) return std::nullopt;
  TaskSlot& m = m_->tasks[head_ % kTaskSlots];
  const TaskState st = load_task_state(m);
  if (st == TaskState::kDone || st == TaskState::kNotRun) {
    Status s = m.result.load();
    store_task_state(m, TaskState::kIdle);
    ++head_;
    if (st == TaskState::kNotRun) return Outcome{OutcomeKind::kNotRun, s.with_context(name())};
    if (s.ok()) return Outcome{OutcomeKind::kSuccess, Status::Ok()};
    return Outcome{OutcomeKind::kTaskFailure, s.with_context(name() + " task failed")};
  }
  if (check_liveness || failed_.load(std::memory_order_acquire)) {
    Status h = health();
    if (!h.ok()) {
      // Whatever is still queued will never run: each poll reports one.
      ++head_;
      return Outcome{OutcomeKind::kEndpointFailure, h};
    }
  }
  return std::nullopt;
}

Expected<uint64_t> LocalEndpoint::control(const ControlRequest& req, Deadline deadline) {
  std::lock_guard<std::mutex> lk(control_mu_);
  TASKRING_RETURN_IF_ERROR(post_locked(req));
  return wait_locked(req.op, deadline);
}

Status LocalEndpoint::control_post(const ControlRequest& req) {
  std::unique_lock<std::mutex> lk(control_mu_);
  TASKRING_RETURN_IF_ERROR(post_locked(req));
  posted_ = std::move(lk);
  posted_op_ = req.op;
  return Status::Ok();
}

Expected<uint64_t> LocalEndpoint::control_wait(Deadline deadline) {
  if (!posted_.owns_lock()) return failed_precondition(name() + ": control_wait without control_post");
  std::unique_lock<std::mutex> lk = std::move(posted_);
  return wait_locked(posted_op_, deadline);
}

Status LocalEndpoint::post_locked(const ControlRequest& req) {
  // Only the latched failure here (no waitpid on the fast path): a child
  // that died since is found by the liveness check between park slices.
  if (failed_.load(std::memory_order_acquire)) return health();
  if (req.fd >= 0) {
    if (comm_socket_ < 0) return failed_precondition(name() + " has no socket for file descriptors");
    // The descriptor travels before the request is published, so the child
    // finds it queued when it serves the request.
    Status f = send_fd(comm_socket_, req.fd);
    if (!f.ok()) return f.with_context(name());
  }
  Mailbox& m = *m_;
  m.op = req.op;
  std::memcpy(m.control_args, req.args, sizeof(req.args));
  store_control_state(m, ControlState::kRequest);
  bell_ring(m.child_bell);
  return Status::Ok();
}

Expected<uint64_t> LocalEndpoint::wait_locked(ControlOp op, Deadline deadline) {
  Mailbox& m = *m_;
  const std::string what = "control reply from " + name();
  Status w = bell_wait(
      *parent_bell_, [&] { return load_control_state(m) == ControlState::kDone; }, [&] { return health(); }, deadline,
      what.c_str(), kLivenessSliceNs);
  if (!w.ok()) {
    // The frame may still be busy in the child: nothing more can go through
    // this endpoint safely.
    fail(w.code() == StatusCode::kDeadlineExceeded ? w.with_context(name() + " control call") : w);
    return health();
  }
  Status r = load_status(m.control_code, m.control_length, m.control_message);
  uint64_t v = m.control_value;
  store_control_state(m, ControlState::kIdle);
  if (!r.ok()) return r.with_context(name() + " control op " + std::to_string(static_cast<uint32_t>(op)));
  return v;
}

}  // namespace taskring::node
