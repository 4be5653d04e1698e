// NetWorker: message handling, runs on rank 0, serve() on the others,
// remote buffers, liveness and close. Startup is net_bootstrap.cpp.
#include "taskring/net/net_worker.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "net_worker_impl.hpp"

namespace taskring::net {

std::string NetWorker::Impl::rank_name(int r) const {
  std::string s = "rank " + std::to_string(r);
  if (r >= 0 && static_cast<size_t>(r) < hellos.size() && hello_ok[static_cast<size_t>(r)])
    s += " (pid " + std::to_string(hellos[static_cast<size_t>(r)].pid) + " on " + hellos[static_cast<size_t>(r)].host +
         ")";
  return s;
}

void NetWorker::Impl::abort_job(const std::string& why) {
  std::fprintf(stderr, "taskring L4 rank %d: ending the MPI job (MPI_Abort): %s\n", rank, why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);  // MPI_Abort does not return; in case it does
}

void NetWorker::Impl::handle(int src, Msg type, Reader& r) {
  switch (type) {
    case Msg::kHello: on_hello(src, r); return;
    case Msg::kWelcome: on_welcome(r); return;
    case Msg::kTask:
      if (server) server->on_task(src, r);
      return;
    case Msg::kCompletion:
      if (rank == 0 && static_cast<size_t>(src) < endpoints.size()) endpoints[static_cast<size_t>(src)]->on_message(r);
      return;
    case Msg::kControl:
      if (server) server->on_control(src, r);
      return;
    case Msg::kControlReply: on_control_reply(r); return;
    case Msg::kFetch:
    case Msg::kFetchReply:
    case Msg::kPut:
    case Msg::kPutReady:
    case Msg::kPutDone:
      if (mover) mover->handle(src, type, r);
      return;
    case Msg::kShutdown:
      if (src != 0) return;
      transport->send(0, encode_empty(Msg::kBye));
      shutdown_requested.store(true, std::memory_order_release);
      waiter.notify_all();
      return;
    case Msg::kBye:
      byes.fetch_add(1, std::memory_order_release);
      waiter.notify_all();
      return;
    case Msg::kHeartbeat: return;
    case Msg::kDomainArrived:
    case Msg::kDomainData:
    case Msg::kDomainAbort:
    case Msg::kDomainShare: domains->handle(src, type, r); return;
  }
}

// A HELLO that does not decode stays in the table with what was read (its
// protocol); check_hellos() refuses it.
void NetWorker::Impl::on_hello(int src, Reader& r) {
  if (rank != 0 || static_cast<size_t>(src) >= hellos.size()) return;
  HelloMsg h;
  (void)h.decode(r, cfg.protocol_version);
  {
    std::lock_guard<std::mutex> lk(mu);
    hello_ok[static_cast<size_t>(src)] = r.ok() && h.protocol == cfg.protocol_version;
    hellos[static_cast<size_t>(src)] = std::move(h);
  }
  hello_count.fetch_add(1, std::memory_order_release);
  waiter.notify_all();
}

void NetWorker::Impl::on_welcome(Reader& r) {
  WelcomeMsg m;
  Status s = m.decode(r);
  {
    std::lock_guard<std::mutex> lk(mu);
    welcome = s.ok() ? m.verdict : s;
  }
  welcomed.store(true, std::memory_order_release);
  waiter.notify_all();
}

void NetWorker::Impl::on_control_reply(Reader& r) {
  ControlReplyMsg m;
  Status s = m.decode(r);
  std::shared_ptr<PendingControl> p;
  {
    std::lock_guard<std::mutex> lk(mu);
    auto it = controls.find(m.seq);
    if (it == controls.end()) return;
    p = it->second;
    controls.erase(it);
  }
  p->status = s.ok() ? m.status : s;
  p->entry = m.entry;
  p->done.store(true, std::memory_order_release);
  p->waiter.notify_all();
}

void NetWorker::Impl::on_lost(int peer, uint64_t silent_ms) {
  Status why = unavailable(rank_name(peer) + " sent nothing for " + std::to_string(silent_ms) +
                           " ms (NetConfig::peer_timeout_ms=" + std::to_string(cfg.peer_timeout_ms) +
                           "): the process died or hangs");
  {
    std::lock_guard<std::mutex> lk(mu);
    if (lost_status.ok()) lost_status = why;
  }
  lost.store(true, std::memory_order_release);
  if (static_cast<size_t>(peer) < endpoints.size()) endpoints[static_cast<size_t>(peer)]->fail(why);
  mover->fail_peer(peer, why);
  {
    std::lock_guard<std::mutex> lk(mu);
    for (auto it = controls.begin(); it != controls.end();) {
      if (it->second->rank != peer) {
        ++it;
        continue;
      }
      it->second->status = why;
      it->second->done.store(true, std::memory_order_release);
      it->second->waiter.notify_all();
      it = controls.erase(it);
    }
  }
  shutdown_requested.store(true, std::memory_order_release);
  waiter.notify_all();
  std::fprintf(stderr, "taskring L4 rank %d: %s; the job ends in %llu ms (NetConfig::abort_grace_ms)\n", rank,
               why.message().c_str(), static_cast<unsigned long long>(cfg.abort_grace_ms));
  std::fflush(stderr);
  transport->at(mono_ns() + cfg.abort_grace_ms * 1'000'000, [this, why] { abort_job(why.message()); });
}

JobIdentity NetWorker::Impl::my_job() const {
  JobIdentity j;
  j.build = this_build_id();
  j.chips = static_cast<uint32_t>(cfg.node.chips);
  j.subs = static_cast<uint32_t>(cfg.node.sub_workers);
  j.runtime = cfg.node.runtime;
  j.ranks = cfg.expected_ranks;
  j.fields = cfg.job;
  return j;
}

Status NetWorker::Impl::check_hellos() {
  std::lock_guard<std::mutex> lk(mu);
  const HelloMsg& me = hellos[0];
  for (int r = 0; r < size; ++r) {
    const HelloMsg& h = hellos[static_cast<size_t>(r)];
    const std::string who = "rank " + std::to_string(r);
    if (h.protocol != cfg.protocol_version)
      return failed_precondition(who + " speaks L4 protocol " + std::to_string(h.protocol) + ", rank 0 speaks " +
                                 std::to_string(cfg.protocol_version) + "; run one taskring build on every rank");
    if (!hello_ok[static_cast<size_t>(r)]) return invalid_argument(who + " sent a malformed HELLO");
    if (h.version != me.version)
      return failed_precondition(who + " runs taskring '" + h.version + "', rank 0 runs '" + me.version +
                                 "'; run one taskring build on every rank");
    if (h.names != names) {
      std::string a, b;
      for (auto& n : h.names) a += (a.empty() ? "" : ",") + n;
      for (auto& n : names) b += (b.empty() ? "" : ",") + n;
      return failed_precondition(rank_name(r) + " registered the L4 callables [" + a + "], rank 0 [" + b +
                                 "]; register the same names in the same order on every rank");
    }
    if (const std::string d = job_mismatch(me.job, h.job, size); !d.empty())
      return failed_precondition(rank_name(r) + " runs another job: " + d + "; start every rank with the same command");
    if (!h.node.ok()) return h.node.with_context(rank_name(r) + ": its node failed its init");
  }
  return Status::Ok();
}

Status NetWorker::Impl::check_tensor(const ChipTensor& t) const {
  auto d = describe_remote(t);
  if (!d.ok()) return d.status();
  if (d->owner < 0 || d->owner >= size)
    return out_of_range("remote tensor names owner rank " + std::to_string(d->owner) + ", not in [0, " +
                        std::to_string(size) + ")");
  auto e = mirrors[static_cast<size_t>(d->owner)]->check(*d);
  if (!e.ok()) return e.status();
  if (t.buffer.size != e->bytes)
    return invalid_argument("remote tensor of buffer " + std::to_string(d->buffer_id) + " on rank " +
                            std::to_string(d->owner) + " says the buffer has " + std::to_string(t.buffer.size) +
                            " B, it has " + std::to_string(e->bytes) + " B (a hand-made descriptor?)");
  return Status::Ok();
}

Status NetWorker::Impl::require_rank0(const char* api) const {
  if (state != State::kReady)
    return failed_precondition(std::string(api) + ": the worker is not running (init() first)");
  if (rank != 0)
    return failed_precondition(std::string(api) + ": only rank 0 drives the L4 worker; this is rank " +
                               std::to_string(rank) + " (call serve())");
  if (lost.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lk(mu);
    return lost_status;
  }
  return Status::Ok();
}

Expected<BufferEntry> NetWorker::Impl::control(int target, ControlOp op, uint64_t a0, uint64_t a1) {
  auto p = std::make_shared<PendingControl>();
  p->rank = target;
  uint64_t seq;
  {
    std::lock_guard<std::mutex> lk(mu);
    seq = next_control++;
    controls[seq] = p;
  }
  auto msg = std::make_shared<std::vector<char>>(ControlMsg{seq, op, a0, a1}.encode());
  Transport* t = transport.get();
  transport->post([t, target, msg] { t->send(target, std::move(*msg)); });
  transport->expect(1);
  Status ws = p->waiter.wait([&] { return p->done.load(std::memory_order_acquire); },
                             Deadline::after_ms(cfg.transfer_timeout_ms), "a control reply");
  transport->expect(-1);
  if (!ws.ok()) {
    std::lock_guard<std::mutex> lk(mu);
    controls.erase(seq);
    return ws.with_context(rank_name(target));
  }
  if (!p->status.ok()) return p->status.with_context(rank_name(target));
  return p->entry;
}

// ---------------------------------------------------------------------------

NetWorker::NetWorker(NetConfig config) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.cfg = std::move(config);
  NodeConfig nc = m.cfg.node;
  nc.shared_bytes += m.cfg.pool_bytes + m.cfg.staging_bytes + 128;
  nc.rank_base = launcher_rank() * std::max(1, nc.chips);
  m.domains = std::make_shared<DomainService>();
  nc.global_domains = m.domains;
  // One startup deadline for the tree: the node gets three quarters of it,
  // the rest is for MPI's start and the handshake.
  if (m.cfg.startup_timeout_ms > 0)
    nc.startup_timeout_ms =
        std::min<uint64_t>(nc.startup_timeout_ms, std::max<uint64_t>(1, m.cfg.startup_timeout_ms * 3 / 4));
  m.node = std::make_unique<NodeWorker>(nc);
}

NetWorker::~NetWorker() { (void)close(); }

NodeWorker& NetWorker::node() { return *impl_->node; }
int NetWorker::rank() const { return impl_->rank; }
int NetWorker::ranks() const { return impl_->size; }

Expected<int> NetWorker::register_task(const std::string& name, NodeTask fn) {
  Impl& m = *impl_;
  if (m.state != Impl::State::kNew)
    return failed_precondition("NetWorker::register_task('" + name + "'): only before init()");
  if (name.empty() || name.size() > 256) return invalid_argument("NetWorker::register_task: name must be 1..256 bytes");
  if (!fn) return invalid_argument("NetWorker::register_task('" + name + "'): empty function");
  for (const std::string& n : m.names)
    if (n == name)
      return Status(StatusCode::kAlreadyExists, "NetWorker::register_task: '" + name + "' is already registered");
  m.names.push_back(name);
  m.fns.push_back(std::move(fn));
  return static_cast<int>(m.names.size()) - 1;
}

RunHandle NetWorker::submit(OrchFunction orch, SubmitOptions options) {
  Impl& m = *impl_;
  Status s = m.require_rank0("NetWorker::submit");
  if (!s.ok()) {
    auto r = std::make_shared<node::RunState>();
    r->status = s;
    r->done.store(true, std::memory_order_release);
    return RunHandle(std::move(r));
  }
  RunHandle h(m.engine->run_orchestration(orch, nullptr, options.caller_waits));
  m.last_run = std::make_shared<RunHandle>(h);
  return h;
}

Status NetWorker::run(OrchFunction orch, Deadline deadline) {
  return submit(std::move(orch), SubmitOptions{.caller_waits = true}).wait(deadline);
}

Status NetWorker::serve() {
  Impl& m = *impl_;
  if (m.state != Impl::State::kReady) return failed_precondition("NetWorker::serve: the worker is not running");
  if (m.rank == 0) return failed_precondition("NetWorker::serve: rank 0 drives the worker; serve() is for the others");
  // Until rank 0 says SHUTDOWN or is lost; a lost rank 0 also ends the job
  // from the watchdog (abort_grace_ms), so this loop is bounded.
  while (!m.shutdown_requested.load(std::memory_order_acquire))
    (void)m.waiter.wait([&] { return m.shutdown_requested.load(std::memory_order_acquire); }, Deadline::after_ms(1000),
                        "SHUTDOWN from rank 0");
  if (m.lost.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lk(m.mu);
    return m.lost_status;
  }
  return Status::Ok();
}

Expected<RemoteBuffer> NetWorker::remote_malloc(int rank, uint64_t bytes) {
  Impl& m = *impl_;
  TASKRING_RETURN_IF_ERROR(m.require_rank0("NetWorker::remote_malloc"));
  if (rank < 0 || rank >= m.size)
    return out_of_range("NetWorker::remote_malloc: rank " + std::to_string(rank) + " is not in [0, " +
                        std::to_string(m.size) + ")");
  if (bytes == 0 || bytes > kMaxBufferBytes)
    return invalid_argument("NetWorker::remote_malloc: " + std::to_string(bytes) + " B not in [1, 2^32]");
  BufferEntry e;
  if (rank == 0) {
    auto got = m.own->alloc(bytes);
    if (!got.ok()) return got.status();
    e = *got;
    std::memset(m.pool + e.offset, 0, e.bytes);
  } else {
    auto got = m.control(rank, ControlOp::kAlloc, bytes, 0);
    if (!got.ok()) return got.status().with_context("NetWorker::remote_malloc");
    e = *got;
  }
  m.mirrors[static_cast<size_t>(rank)]->record(e);
  return RemoteBuffer{rank, e.id, e.generation, e.bytes};
}

Status NetWorker::remote_free(const RemoteBuffer& b) {
  Impl& m = *impl_;
  TASKRING_RETURN_IF_ERROR(m.require_rank0("NetWorker::remote_free"));
  if (b.owner < 0 || b.owner >= m.size)
    return out_of_range("NetWorker::remote_free: owner rank " + std::to_string(b.owner) + " is not in [0, " +
                        std::to_string(m.size) + ")");
  if (m.last_run && !m.last_run->done())
    return failed_precondition("NetWorker::remote_free: a run is in flight; its tasks may still use the buffer");
  TASKRING_RETURN_IF_ERROR(m.mirrors[static_cast<size_t>(b.owner)]->check(b.range(0, 0)).status());
  if (b.owner == 0) {
    TASKRING_RETURN_IF_ERROR(m.own->free(b.buffer_id, b.generation));
  } else {
    auto r = m.control(b.owner, ControlOp::kFree, b.buffer_id, b.generation);
    if (!r.ok()) return r.status().with_context("NetWorker::remote_free");
  }
  return m.mirrors[static_cast<size_t>(b.owner)]->free(b.buffer_id, b.generation);
}

Status NetWorker::Impl::check_copy(const char* api, const RemoteTensor& d, const void* host) const {
  TASKRING_RETURN_IF_ERROR(require_rank0(api));
  if (d.owner < 0 || d.owner >= size)
    return out_of_range(std::string(api) + ": owner rank " + std::to_string(d.owner) + " is not in [0, " +
                        std::to_string(size) + ")");
  if (host == nullptr && d.nbytes > 0) return invalid_argument(std::string(api) + ": null host pointer");
  auto e = mirrors[static_cast<size_t>(d.owner)]->check(d);
  if (!e.ok()) return e.status().with_context(api);
  return Status::Ok();
}

Status NetWorker::remote_copy_to(const RemoteTensor& dst, const void* src) {
  Impl& m = *impl_;
  TASKRING_RETURN_IF_ERROR(m.check_copy("NetWorker::remote_copy_to", dst, src));
  return m.mover->put(dst, src, Deadline::after_ms(m.cfg.transfer_timeout_ms));
}

Status NetWorker::remote_copy_from(void* dst, const RemoteTensor& src) {
  Impl& m = *impl_;
  TASKRING_RETURN_IF_ERROR(m.check_copy("NetWorker::remote_copy_from", src, dst));
  return m.mover->fetch(src, dst, Deadline::after_ms(m.cfg.transfer_timeout_ms));
}

Expected<ChipTensor> NetWorker::remote_tensor(const RemoteTensor& desc, std::span<const uint32_t> shapes,
                                              DataType dtype) const {
  const Impl& m = *impl_;
  TASKRING_RETURN_IF_ERROR(m.require_rank0("NetWorker::remote_tensor"));
  if (desc.owner < 0 || desc.owner >= m.size)
    return out_of_range("NetWorker::remote_tensor: owner rank " + std::to_string(desc.owner) + " is not in [0, " +
                        std::to_string(m.size) + ")");
  auto e = m.mirrors[static_cast<size_t>(desc.owner)]->check(desc);
  if (!e.ok()) return e.status().with_context("NetWorker::remote_tensor");
  auto t = make_remote_tensor(desc, e->bytes, shapes, dtype);
  if (!t.ok()) return t.status().with_context("NetWorker::remote_tensor");
  return t;
}

Status NetWorker::close() {
  Impl& m = *impl_;
  if (m.state == Impl::State::kClosed) return Status::Ok();
  if (m.state == Impl::State::kNew) {
    m.state = Impl::State::kClosed;
    return m.node->close();
  }
  const bool ready = m.state == Impl::State::kReady;
  m.state = Impl::State::kClosed;
  if (m.comm == MPI_COMM_NULL) {  // failed before MPI started
    return m.node->close();
  }
  const uint64_t close_ms = m.cfg.node.close_timeout_ms;
  if (m.engine) m.engine->shutdown(aborted("NetWorker::close: the worker is closing"), Deadline::after_ms(close_ms));
  if (m.rank == 0 && ready && !m.lost.load()) {
    Transport* t = m.transport.get();
    const int n = m.size;
    t->post([t, n] {
      for (int r = 1; r < n; ++r) t->send(r, encode_empty(Msg::kShutdown));
    });
    Status w = m.waiter.wait([&] { return m.byes.load(std::memory_order_acquire) >= n - 1 || m.lost.load(); },
                             Deadline::after_ms(close_ms), "BYE from every rank");
    if (!w.ok()) {
      m.lost.store(true);
      std::lock_guard<std::mutex> lk(m.mu);
      if (m.lost_status.ok())
        m.lost_status =
            deadline_exceeded("NetWorker::close: " + std::to_string(n - 1 - m.byes.load()) +
                              " rank(s) did not answer SHUTDOWN within close_timeout_ms=" + std::to_string(close_ms));
    }
  }
  if (m.rank != 0 && ready && !m.lost.load()) {
    // Closing without serve() (e.g. a local error after init): rank 0's
    // close() still expects our BYE, which the progress thread sends when
    // its SHUTDOWN arrives.
    Status w = m.waiter.wait([&] { return m.shutdown_requested.load(std::memory_order_acquire); },
                             Deadline::after_ms(close_ms), "SHUTDOWN from rank 0");
    if (!w.ok()) {
      m.lost.store(true);
      std::lock_guard<std::mutex> lk(m.mu);
      if (m.lost_status.ok()) m.lost_status = w.with_context("NetWorker::close");
    }
  }
  if (m.server) m.server->stop();
  if (m.domains) m.domains->unbind();
  if (m.transport) m.transport->stop();
  Status nc = m.node->close();
  if (m.lost.load(std::memory_order_acquire)) {
    std::string why;
    {
      std::lock_guard<std::mutex> lk(m.mu);
      why = m.lost_status.message();
    }
    m.abort_job(why);
  }
  // The engine parks on a doorbell in the window: it goes first.
  m.engine.reset();
  m.endpoints.clear();
  if (m.transport) m.transport->close_doorbells();  // collective: every rank that is not lost gets here
  MPI_Comm_free(&m.comm);
  if (m.we_initialized_mpi && m.cfg.finalize_mpi) MPI_Finalize();
  return nc;
}

}  // namespace taskring::net
