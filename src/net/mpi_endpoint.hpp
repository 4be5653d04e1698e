// MpiEndpoint: the L4 engine's view of one rank's node (rank 0 side).
//
// start() encodes the task (its tensors as descriptors: remote keys and
// views, see remote_key.hpp) and hands it to the progress thread, which
// sends a TASK to the rank; the rank's COMPLETION (its Status, the text
// already prefixed by the rank's node) finishes it. Where the rank is
// direct() (MPI_THREAD_MULTIPLE, its doorbells reachable) the thread that
// drives the run (the caller waiting on it, else the scheduler thread)
// sends the TASK itself to the rank's executor, and poll() receives the
// COMPLETION itself (the rank rings rank 0's engine doorbell, the bell the
// driving thread parks on): no progress thread on the task's path. Otherwise
// the progress threads carry both and poll() reads an atomic. A lost rank (no heartbeat)
// fails the task in flight and every later start() with the same error.
// control()/control_post()/control_wait() carry the L3 chip controls and
// comm-domain attach, which have no meaning for a whole node: UNIMPLEMENTED
// (buffers go through NetWorker::remote_malloc; global domains: docs/l4.md).
#pragma once

#include <atomic>
#include <mutex>

#include "node/dag/engine.hpp"
#include "transport.hpp"

namespace taskring::net {

class MpiEndpoint final : public node::Endpoint {
 public:
  MpiEndpoint(int rank, std::string name, Transport& t, node::ShmBell* bell)
      : rank_(rank), name_(std::move(name)), t_(t), bell_(bell) {}

  std::string name() const override { return name_; }
  Status start(uint64_t task_id, const node::TaskPayload& task) override;
  std::optional<node::Outcome> poll(bool check_liveness) override;
  Expected<uint64_t> control(const node::ControlRequest& req, Deadline deadline) override;
  Status control_post(const node::ControlRequest& req) override;
  Expected<uint64_t> control_wait(Deadline deadline) override;
  Status health() override;

  // Before the engine starts: "rank 2 (pid 123 on host)" once known.
  void set_name(std::string name) { name_ = std::move(name); }
  // Progress thread: a COMPLETION message from the rank (after its header).
  void on_message(Reader& r);
  // Any thread: the rank is lost.
  void fail(Status why);

 private:
  // The rank's COMPLETION for task `seq`.
  void on_completion(uint64_t seq, Status s);
  // The driving thread: COMPLETIONs on the direct channel (Transport::Channel::kEngine).
  void take_direct();
  const int rank_;
  std::string name_;
  Transport& t_;
  node::ShmBell* bell_;
  std::atomic<uint64_t> seq_{0};  // of the task in flight
  std::atomic<bool> done_{false};
  std::atomic<bool> in_flight_{false};
  std::mutex mu_;  // result_, failure_
  Status result_;
  Status failure_;
  std::atomic<bool> failed_{false};
};

}  // namespace taskring::net
