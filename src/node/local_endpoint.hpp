// LocalEndpoint: a forked child on this host, reached through its Mailbox.
//
// start_staged() fills the next slot of the child's task queue and stores
// TASK_READY (release); flush() rings the child's bell once for everything
// staged since the last flush (one batch, one wake); start() is both. poll()
// reads the oldest slot's TASK_DONE / TASK_NOT_RUN (acquire) and result.
// control() publishes CONTROL_REQUEST and waits spin-then-park on the
// parent's bell, checking the child's liveness between park slices, so a
// child that dies mid-call fails the call within one slice. A dead child
// (or a control call that timed out and left the frame busy) fails the
// endpoint for good, and every task still queued in it fails with that.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "child_process.hpp"
#include "dag/endpoint.hpp"

namespace taskring::node {

// Liveness is re-checked at least this often while a parent waits on a
// child (the 10 ms death-detection budget, with margin).
inline constexpr uint64_t kLivenessSliceNs = 2'000'000;

class LocalEndpoint final : public Endpoint {
 public:
  // `comm_socket`: the parent's end of the child's socket for file
  // descriptors (ControlRequest::fd); -1 when the child has none.
  LocalEndpoint(Mailbox* mailbox, ShmBell* parent_bell, std::shared_ptr<ChildProcess> child, int comm_socket = -1);
  ~LocalEndpoint() override;

  std::string name() const override { return child_->name(); }
  Status start(uint64_t task_id, const TaskPayload& task) override;
  Status start_staged(uint64_t task_id, const TaskPayload& task, int32_t countdown) override;
  int depth() const override { return kTaskSlots; }
  void flush(bool wake) override;
  void expect_work() override { m_->wake_hint.store(1, std::memory_order_release); }
  int exit_fd() const override { return child_->pidfd(); }
  void watch_stall(uint64_t limit_ns, uint64_t now_ns, const std::string& knob) override {
    (void)child_->kill_if_stopped_for(limit_ns, now_ns, knob);
  }
  void watch_task(uint64_t limit_ns, uint64_t now_ns, const std::string& limit) override;
  std::optional<Outcome> poll(bool check_liveness) override;
  Expected<uint64_t> control(const ControlRequest& req, Deadline deadline) override;
  Status control_post(const ControlRequest& req) override;
  Expected<uint64_t> control_wait(Deadline deadline) override;
  Status health() override;

  ChildProcess& child() { return *child_; }
  Mailbox& mailbox() { return *m_; }

 private:
  void fail(Status s);
  Mailbox* m_;
  ShmBell* parent_bell_;
  std::shared_ptr<ChildProcess> child_;
  Status post_locked(const ControlRequest& req);
  Expected<uint64_t> wait_locked(ControlOp op, Deadline deadline);
  std::mutex control_mu_;
  std::unique_lock<std::mutex> posted_;  // held from control_post() to control_wait()
  ControlOp posted_op_ = ControlOp::kNoop;
  int comm_socket_ = -1;
  std::mutex fail_mu_;
  std::atomic<bool> failed_{false};
  Status failure_;
  // Scheduling thread only: the oldest slot in flight and the next to
  // fill (counters, modulo kTaskSlots), and whether a slot was filled
  // since the last flush.
  uint64_t head_ = 0, tail_ = 0;
  bool staged_ = false;
};

}  // namespace taskring::node
