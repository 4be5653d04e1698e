#include "mpi_endpoint.hpp"

#include "wire_messages.hpp"

#include "taskring/net/net_worker.hpp"

namespace taskring::net {

Status MpiEndpoint::health() {
  if (!failed_.load(std::memory_order_acquire)) return Status::Ok();
  std::lock_guard<std::mutex> lk(mu_);
  return failure_;
}

void MpiEndpoint::fail(Status why) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (failed_.load(std::memory_order_relaxed)) return;
    failure_ = std::move(why);
    failed_.store(true, std::memory_order_release);
  }
  node::bell_ring(*bell_);
}

Status MpiEndpoint::start(uint64_t, const node::TaskPayload& task) {
  if (failed_.load(std::memory_order_acquire)) return health();
  const uint64_t seq = seq_.load(std::memory_order_relaxed) + 1;
  TaskMsg m;
  m.seq = seq;
  m.callable = task.callable;
  m.tensors = task.tensors;
  m.tags = task.tags;
  m.scalars = task.scalars;
  done_.store(false, std::memory_order_relaxed);
  seq_.store(seq, std::memory_order_release);
  in_flight_.store(true, std::memory_order_release);
  t_.expect(1);
  t_.send_any(rank_, m.encode(), Transport::Channel::kExecutor);
  return Status::Ok();
}

void MpiEndpoint::on_completion(uint64_t seq, Status s) {
  if (seq != seq_.load(std::memory_order_acquire) || !in_flight_.load(std::memory_order_acquire)) return;
  {
    std::lock_guard<std::mutex> lk(mu_);
    result_ = std::move(s);
  }
  done_.store(true, std::memory_order_release);
  node::bell_ring(*bell_);
}

void MpiEndpoint::on_message(Reader& r) {
  CompletionMsg m;
  Status s = m.decode(r);
  on_completion(m.seq, s.ok() ? std::move(m.status) : s);
}

void MpiEndpoint::take_direct() {
  // One task in flight: stop at its COMPLETION (probing on would be two
  // more MPI_Improbe calls on the round trip's path).
  std::vector<char> buf;
  int from = -1;
  while (!done_.load(std::memory_order_acquire) && t_.take(rank_, Transport::Channel::kEngine, &buf, &from)) {
    Reader r(buf.data(), buf.size());
    Msg type;
    if (r.header(&type) && type == Msg::kCompletion) on_message(r);
  }
}

std::optional<node::Outcome> MpiEndpoint::poll(bool) {
  if (!in_flight_.load(std::memory_order_acquire)) return std::nullopt;
  if (!done_.load(std::memory_order_acquire)) take_direct();
  if (done_.load(std::memory_order_acquire)) {
    in_flight_.store(false, std::memory_order_relaxed);
    t_.expect(-1);
    std::lock_guard<std::mutex> lk(mu_);
    if (result_.ok()) return node::Outcome{node::OutcomeKind::kSuccess, Status::Ok()};
    return node::Outcome{node::OutcomeKind::kTaskFailure, result_.with_context(name_)};
  }
  if (failed_.load(std::memory_order_acquire)) {
    in_flight_.store(false, std::memory_order_relaxed);
    t_.expect(-1);
    return node::Outcome{node::OutcomeKind::kEndpointFailure, health()};
  }
  return std::nullopt;
}

Expected<uint64_t> MpiEndpoint::control(const node::ControlRequest&, Deadline) {
  return unimplemented(name_ +
                       ": chip control calls (malloc/copy, comm domains) do not apply to a whole node "
                       "at L4; use NetWorker::remote_malloc / remote_copy_to / remote_copy_from");
}

Status MpiEndpoint::control_post(const node::ControlRequest& req) {
  return control(req, Deadline::after_ms(0)).status();
}

Expected<uint64_t> MpiEndpoint::control_wait(Deadline deadline) { return control(node::ControlRequest{}, deadline); }

}  // namespace taskring::net
