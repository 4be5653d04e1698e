// NetWorker: startup (node, MPI, HELLO/WELCOME), runs on rank 0, serve()
// on the others, remote buffers, liveness and close.
#include "taskring/net/net_worker.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <optional>

#include "buffer_table.hpp"
#include "data_mover.hpp"
#include "domain_service.hpp"
#include "job_identity.hpp"
#include "mpi_endpoint.hpp"
#include "node/dag/engine.hpp"
#include "rank_server.hpp"
#include "remote_key.hpp"
#include "transport.hpp"

namespace taskring::net {

namespace {

// The rank mpirun gave this process, known before MPI_Init (Open MPI and
// PMIx export it); the node forks its children before MPI starts, and their
// spans need a global rank.
int env_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK"})
    if (const char* s = std::getenv(v)) return std::atoi(s);
  return 0;
}

std::string host_name() {
  char h[256] = {};
  gethostname(h, sizeof(h) - 1);
  return h;
}

// The least time the HELLO/WELCOME handshake gets, even when the node init
// and MPI_Init used up the startup deadline (see init()).
constexpr uint64_t kMinHandshakeMs = 200;

struct Hello {
  uint32_t protocol = 0;
  std::string version;
  uint32_t pid = 0;
  std::string host;
  Status node;
  std::vector<std::string> names;
  JobIdentity job;
  bool parsed = false;
};

struct PendingControl {
  int rank = -1;
  std::atomic<bool> done{false};
  Status status;
  BufferEntry entry;
  Waiter waiter;
};

}  // namespace

struct NetWorker::Impl {
  enum class State { kNew, kReady, kFailed, kClosed };

  NetConfig cfg;
  std::unique_ptr<NodeWorker> node;
  std::vector<std::string> names;
  std::vector<NodeTask> fns;
  State state = State::kNew;
  Status init_error;

  bool we_initialized_mpi = false;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = -1, size = 0;
  char* pool = nullptr;
  char* staging = nullptr;

  std::unique_ptr<BufferTable> own;
  // Comm domains spanning nodes; also held by the node (NodeConfig::
  // global_domains). Declared before the transport: it outlives it.
  std::shared_ptr<DomainService> domains;
  std::unique_ptr<Transport> transport;
  std::unique_ptr<DataMover> mover;
  std::unique_ptr<RankServer> server;
  // Rank 0 only.
  std::vector<std::unique_ptr<BufferTable>> mirrors;
  std::vector<MpiEndpoint*> endpoints;  // owned by the engine
  std::unique_ptr<node::Engine> engine;
  std::shared_ptr<RunHandle> last_run;

  // Handshake and shutdown, written on the progress thread.
  mutable std::mutex mu;
  Waiter waiter;
  std::vector<Hello> hellos;
  std::atomic<int> hello_count{0};
  std::atomic<bool> welcomed{false};
  Status welcome;
  std::atomic<int> byes{0};
  std::atomic<bool> shutdown_requested{false};
  std::map<uint64_t, std::shared_ptr<PendingControl>> controls;
  uint64_t next_control = 1;
  // A lost peer: MPI_Finalize would wait for it, so close() aborts the job.
  std::atomic<bool> lost{false};
  Status lost_status;

  void handle(int src, Msg type, Reader& r);
  void on_lost(int peer, uint64_t silent_ms);
  std::string rank_name(int r) const;
  Status check_hellos();
  JobIdentity my_job() const;
  Status check_tensor(const ChipTensor& t) const;
  Expected<BufferEntry> control(int rank, ControlOp op, uint64_t a0, uint64_t a1);
  Status require_rank0(const char* api) const;
  // remote_copy_to/from: rank 0, a known owner, a host pointer, a live range.
  Status check_copy(const char* api, const RemoteTensor& d, const void* host) const;
  [[noreturn]] void abort_job(const std::string& why);
};

std::string NetWorker::Impl::rank_name(int r) const {
  std::string s = "rank " + std::to_string(r);
  if (r >= 0 && static_cast<size_t>(r) < hellos.size() && hellos[static_cast<size_t>(r)].parsed)
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
    case Msg::kHello: {
      if (rank != 0 || static_cast<size_t>(src) >= hellos.size()) return;
      Hello h;
      h.protocol = r.get<uint32_t>();
      if (h.protocol == cfg.protocol_version) {
        h.version = r.str();
        h.pid = r.get<uint32_t>();
        h.host = r.str();
        const auto code = static_cast<StatusCode>(r.get<int32_t>());
        std::string msg = r.str(kMaxErrorBytes);
        h.node = Status(code, msg);
        const uint32_t n = r.get<uint32_t>();
        for (uint32_t i = 0; i < n && i < 4096 && r.ok(); ++i) h.names.push_back(r.str());
        h.job.read(r);
        h.parsed = r.ok();
      }
      {
        std::lock_guard<std::mutex> lk(mu);
        hellos[static_cast<size_t>(src)] = std::move(h);
      }
      hello_count.fetch_add(1, std::memory_order_release);
      waiter.notify_all();
      return;
    }
    case Msg::kWelcome: {
      const auto code = static_cast<StatusCode>(r.get<int32_t>());
      std::string msg = r.str(kMaxErrorBytes * 4);
      {
        std::lock_guard<std::mutex> lk(mu);
        welcome = r.ok() ? Status(code, msg) : r.error("WELCOME");
      }
      welcomed.store(true, std::memory_order_release);
      waiter.notify_all();
      return;
    }
    case Msg::kTask:
      if (server) server->on_task(src, r);
      return;
    case Msg::kCompletion: {
      if (rank != 0 || static_cast<size_t>(src) >= endpoints.size()) return;
      endpoints[static_cast<size_t>(src)]->on_message(r);
      return;
    }
    case Msg::kControl:
      if (server) server->on_control(src, r);
      return;
    case Msg::kControlReply: {
      const uint64_t seq = r.get<uint64_t>();
      const auto code = static_cast<StatusCode>(r.get<int32_t>());
      std::string msg = r.str(kMaxErrorBytes);
      BufferEntry e;
      e.id = r.get<uint32_t>();
      e.generation = r.get<uint32_t>();
      e.bytes = r.get<uint64_t>();
      std::shared_ptr<PendingControl> p;
      {
        std::lock_guard<std::mutex> lk(mu);
        auto it = controls.find(seq);
        if (it == controls.end()) return;
        p = it->second;
        controls.erase(it);
      }
      p->status = r.ok() ? Status(code, msg) : r.error("CONTROL_REPLY");
      p->entry = e;
      p->done.store(true, std::memory_order_release);
      p->waiter.notify_all();
      return;
    }
    case Msg::kFetch:
    case Msg::kFetchReply:
    case Msg::kPut:
    case Msg::kPutReady:
    case Msg::kPutDone:
      if (mover) mover->handle(src, type, r);
      return;
    case Msg::kShutdown:
      if (src != 0) return;
      transport->send(0, Writer(Msg::kBye).take());
      shutdown_requested.store(true, std::memory_order_release);
      waiter.notify_all();
      return;
    case Msg::kBye:
      byes.fetch_add(1, std::memory_order_release);
      waiter.notify_all();
      return;
    case Msg::kHeartbeat:
      return;
    case Msg::kDomainArrived:
    case Msg::kDomainData:
    case Msg::kDomainAbort:
      domains->handle(src, type, r);
      return;
  }
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
  const Hello& me = hellos[0];
  for (int r = 0; r < size; ++r) {
    const Hello& h = hellos[static_cast<size_t>(r)];
    const std::string who = "rank " + std::to_string(r);
    if (h.protocol != cfg.protocol_version)
      return failed_precondition(who + " speaks L4 protocol " + std::to_string(h.protocol) + ", rank 0 speaks " +
                                 std::to_string(cfg.protocol_version) + "; run one taskring build on every rank");
    if (!h.parsed) return invalid_argument(who + " sent a malformed HELLO");
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
      return failed_precondition(rank_name(r) + " runs another job: " + d +
                                 "; start every rank with the same command");
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
  if (state != State::kReady) return failed_precondition(std::string(api) + ": the worker is not running (init() first)");
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
  Writer w(Msg::kControl);
  w.put(seq).put(static_cast<uint32_t>(op)).put(a0).put(a1);
  auto msg = std::make_shared<std::vector<char>>(w.take());
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
  nc.rank_base = env_rank() * std::max(1, nc.chips);
  m.domains = std::make_shared<DomainService>();
  nc.global_domains = m.domains;
  // One startup deadline for the tree: the node gets three quarters of it,
  // the rest is for MPI's start and the handshake.
  if (m.cfg.startup_timeout_ms > 0)
    nc.startup_timeout_ms = std::min<uint64_t>(nc.startup_timeout_ms, std::max<uint64_t>(1, m.cfg.startup_timeout_ms * 3 / 4));
  m.node = std::make_unique<NodeWorker>(nc);
}

NetWorker::~NetWorker() { (void)close(); }

NodeWorker& NetWorker::node() { return *impl_->node; }
int NetWorker::launcher_rank() { return env_rank(); }
int NetWorker::rank() const { return impl_->rank; }
int NetWorker::ranks() const { return impl_->size; }

Expected<int> NetWorker::register_task(const std::string& name, NodeTask fn) {
  Impl& m = *impl_;
  if (m.state != Impl::State::kNew) return failed_precondition("NetWorker::register_task('" + name + "'): only before init()");
  if (name.empty() || name.size() > 256) return invalid_argument("NetWorker::register_task: name must be 1..256 bytes");
  if (!fn) return invalid_argument("NetWorker::register_task('" + name + "'): empty function");
  for (const std::string& n : m.names)
    if (n == name) return Status(StatusCode::kAlreadyExists, "NetWorker::register_task: '" + name + "' is already registered");
  m.names.push_back(name);
  m.fns.push_back(std::move(fn));
  return static_cast<int>(m.names.size()) - 1;
}

Status NetWorker::init() {
  Impl& m = *impl_;
  if (m.state != Impl::State::kNew)
    return failed_precondition("NetWorker::init: init() runs once; make a new worker");
  m.state = Impl::State::kFailed;
  const Deadline deadline = Deadline::after_ms(m.cfg.startup_timeout_ms);
  if (m.cfg.startup_timeout_ms == 0 || m.cfg.peer_timeout_ms == 0 || m.cfg.transfer_timeout_ms == 0)
    return invalid_argument("NetWorker::init: startup_timeout_ms, peer_timeout_ms and transfer_timeout_ms must be > 0");
  if (m.cfg.poll_window_us > 1'000'000)
    return invalid_argument("NetWorker::init: poll_window_us " + std::to_string(m.cfg.poll_window_us) +
                            " not in [0, 1000000]");
  if (m.cfg.pool_bytes == 0 || m.cfg.pool_bytes > (1ull << 40) || m.cfg.staging_bytes > (1ull << 40))
    return invalid_argument("NetWorker::init: pool_bytes must be in [1, 2^40], staging_bytes at most 2^40");

  // 1. The node: forks its children before MPI starts any thread. Its
  // share of the one startup deadline (three quarters) was set in the
  // constructor.
  Status node_status = m.node->init();
  if (node_status.ok()) {
    auto pool = m.node->alloc_shared(m.cfg.pool_bytes);
    auto staging = m.node->alloc_shared(std::max<uint64_t>(m.cfg.staging_bytes, 1));
    if (!pool.ok()) node_status = pool.status();
    else if (!staging.ok()) node_status = staging.status();
    else {
      m.pool = static_cast<char*>(*pool);
      m.staging = static_cast<char*>(*staging);
    }
  }
  if (node_status.ok() && m.cfg.node_setup) {
    try {
      node_status = m.cfg.node_setup(*m.node);
    } catch (const std::exception& e) {
      node_status = internal_error(std::string("threw: ") + e.what());
    }
    if (!node_status.ok()) node_status = node_status.with_context("NetConfig::node_setup");
  }

  // 2. MPI. Every rank reaches the handshake even when its node failed, so
  // rank 0 can name it and every rank fails the same way.
  // MPI_THREAD_MULTIPLE lets the scheduler and the executors send their
  // control messages themselves (one thread hop less each way, see
  // transport.hpp); SERIALIZED suffices.
  int inited = 0;
  MPI_Initialized(&inited);
  int provided = 0;
  if (!inited) {
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    m.we_initialized_mpi = true;
  } else {
    MPI_Query_thread(&provided);
  }
  if (m.we_initialized_mpi && provided < MPI_THREAD_SERIALIZED)
    m.abort_job("the MPI library provides thread level " + std::to_string(provided) +
                "; taskring's progress thread needs MPI_THREAD_SERIALIZED");
  MPI_Comm_dup(MPI_COMM_WORLD, &m.comm);
  MPI_Comm_rank(m.comm, &m.rank);
  MPI_Comm_size(m.comm, &m.size);
  if (m.size > kMaxRanks) {
    m.init_error = invalid_argument("NetWorker::init: " + std::to_string(m.size) + " ranks; at most " +
                                    std::to_string(kMaxRanks));
    return m.init_error;  // every rank fails alike; close() finalises
  }
  if (m.rank != env_rank() && std::getenv("OMPI_COMM_WORLD_RANK") != nullptr)
    node_status = internal_error("MPI rank " + std::to_string(m.rank) + " differs from OMPI_COMM_WORLD_RANK");

  m.own = std::make_unique<BufferTable>(m.rank, m.cfg.pool_bytes);
  m.transport = std::make_unique<Transport>(m.comm, m.rank, m.size,
                                            [&m](int src, Msg type, Reader& r) { m.handle(src, type, r); },
                                            m.cfg.poll_window_us * 1000);
  // Collective: every rank that got here (the size check above is the same
  // on every rank) opens its doorbell before any message is sent.
  if (m.cfg.fast_paths) {
    m.transport->open_doorbells();
    m.transport->set_multiple(provided >= MPI_THREAD_MULTIPLE);
  }
  m.mover = std::make_unique<DataMover>(*m.transport, *m.own, m.pool);
  m.domains->bind(m.transport.get(), m.rank, m.size);
  if (node_status.ok()) {
    RankServerConfig sc;
    sc.names = m.names;
    sc.fns = m.fns;
    sc.staging = m.staging;
    sc.staging_bytes = m.cfg.staging_bytes;
    sc.transfer_timeout_ms = m.cfg.transfer_timeout_ms;
    m.server = std::make_unique<RankServer>(*m.transport, *m.mover, *m.own, *m.node, std::move(sc));
  }
  if (m.rank == 0) {
    m.hellos.resize(static_cast<size_t>(m.size));
    // The scheduler parks on rank 0's engine doorbell, which the ranks ring
    // after a direct COMPLETION (Transport::Channel::kEngine).
    node::ShmBell* bell = m.transport->doorbell(Transport::Channel::kEngine);
    std::vector<std::unique_ptr<node::Endpoint>> eps;
    for (int r = 0; r < m.size; ++r) {
      m.mirrors.push_back(std::make_unique<BufferTable>(r, 0));
      auto ep = std::make_unique<MpiEndpoint>(r, "rank " + std::to_string(r), *m.transport, bell);
      m.endpoints.push_back(ep.get());
      eps.push_back(std::move(ep));
    }
    node::EngineConfig ec;
    ec.chip_callables = m.names;
    ec.host_visible = [](uint64_t, uint64_t) { return false; };
    ec.check_tensor = [&m](const ChipTensor& t) { return m.check_tensor(t); };
    ec.api = node::EngineApi{"NetWorker", ""};
    ec.target_word = "rank";
    ec.span_family = "network";  // network.run: upstream's L4 word; the trace analyser skips it
    ec.control_timeout_ms = m.cfg.transfer_timeout_ms;
    m.engine = std::make_unique<node::Engine>(std::move(ec), std::move(eps),
                                              std::vector<std::unique_ptr<node::Endpoint>>{}, bell);
  }
  m.transport->start();
  if (m.server) m.server->start();

  // 3. HELLO to rank 0, READY (or the error) back.
  Writer hello(Msg::kHello);
  hello.put(m.cfg.protocol_version);
  hello.str(std::string(TASKRING_NET_VERSION) + " " + __VERSION__);
  hello.put(static_cast<uint32_t>(getpid())).str(host_name());
  hello.put(static_cast<int32_t>(node_status.code())).str(truncate_error(node_status.message()), kMaxErrorBytes);
  hello.put(static_cast<uint32_t>(m.names.size()));
  for (const std::string& n : m.names) hello.str(n);
  m.my_job().write(hello);
  auto msg = std::make_shared<std::vector<char>>(hello.take());
  Transport* t = m.transport.get();
  t->post([t, msg] { t->send(0, std::move(*msg)); });

  if (m.rank == 0) {
    // MPI_Init is not bounded by us and may eat the deadline; the handshake
    // still gets kMinHandshakeMs, so the ranks that are up are told apart
    // from those that are not (the error names only the latter).
    const Deadline hello_by{std::max(deadline.at_mono_ns, mono_ns() + kMinHandshakeMs * 1'000'000)};
    Status w = m.waiter.wait([&] { return m.hello_count.load(std::memory_order_acquire) >= m.size; }, hello_by,
                             "HELLO from every rank");
    Status verdict;
    std::vector<int> said;
    {
      std::lock_guard<std::mutex> lk(m.mu);
      std::string missing;
      for (int r = 0; r < m.size; ++r) {
        if (m.hellos[static_cast<size_t>(r)].protocol != 0) said.push_back(r);
        else missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      }
      if (!w.ok())
        verdict = deadline_exceeded("no HELLO from rank(s) " + missing + " within startup_timeout_ms=" +
                                    std::to_string(m.cfg.startup_timeout_ms));
    }
    if (verdict.ok()) verdict = m.check_hellos();
    Writer wel(Msg::kWelcome);
    wel.put(static_cast<int32_t>(verdict.code())).str(verdict.message(), kMaxErrorBytes * 4);
    auto wmsg = std::make_shared<std::vector<char>>(wel.take());
    t->post([t, wmsg, said] {
      for (int r : said) t->send(r, *wmsg);
    });
    if (!w.ok()) {
      m.lost.store(true);
      std::lock_guard<std::mutex> lk(m.mu);
      m.lost_status = verdict;
    }
    if (!verdict.ok()) {  // rank 0 knows the verdict; its own WELCOME adds nothing
      m.init_error = verdict.with_context("NetWorker::init");
      return m.init_error;
    }
  }
  const Deadline welcome_by{std::max(deadline.at_mono_ns, mono_ns() + 2 * kMinHandshakeMs * 1'000'000)};
  Status w = m.waiter.wait([&] { return m.welcomed.load(std::memory_order_acquire); }, welcome_by,
                           "READY from rank 0");
  if (!w.ok()) {
    m.init_error = w.with_context("NetWorker::init");
    {
      std::lock_guard<std::mutex> lk(m.mu);
      m.lost_status = m.init_error;
    }
    m.lost.store(true);
    return m.init_error;
  }
  {
    std::lock_guard<std::mutex> lk(m.mu);
    if (!m.welcome.ok()) {
      m.init_error = m.welcome.with_context("NetWorker::init");
      return m.init_error;
    }
  }
  // 4. Ready: liveness from now on, the engine on rank 0.
  std::vector<int> peers;
  if (m.rank == 0) {
    for (int r = 1; r < m.size; ++r) peers.push_back(r);
  } else {
    peers.push_back(0);
  }
  const uint64_t timeout_ns = m.cfg.peer_timeout_ms * 1'000'000;
  t->post([&m, t, peers, timeout_ns] {
    t->watch(peers, timeout_ns / 8, timeout_ns, [&m](int p, uint64_t ms) { m.on_lost(p, ms); });
  });
  for (int r = 0; r < static_cast<int>(m.endpoints.size()); ++r)
    m.endpoints[static_cast<size_t>(r)]->set_name(m.rank_name(r));
  if (m.engine) m.engine->start();
  m.state = Impl::State::kReady;
  return Status::Ok();
}

RunHandle NetWorker::submit(OrchFunction orch) {
  Impl& m = *impl_;
  Status s = m.require_rank0("NetWorker::submit");
  if (!s.ok()) {
    auto r = std::make_shared<node::RunState>();
    r->status = s;
    r->done.store(true, std::memory_order_release);
    return RunHandle(std::move(r));
  }
  RunHandle h(m.engine->run_orchestration(orch));
  m.last_run = std::make_shared<RunHandle>(h);
  return h;
}

Status NetWorker::run(OrchFunction orch, Deadline deadline) { return submit(std::move(orch)).wait(deadline); }

Status NetWorker::serve() {
  Impl& m = *impl_;
  if (m.state != Impl::State::kReady) return failed_precondition("NetWorker::serve: the worker is not running");
  if (m.rank == 0) return failed_precondition("NetWorker::serve: rank 0 drives the worker; serve() is for the others");
  // Until rank 0 says SHUTDOWN or is lost; a lost rank 0 also ends the job
  // from the watchdog (abort_grace_ms), so this loop is bounded.
  while (!m.shutdown_requested.load(std::memory_order_acquire))
    (void)m.waiter.wait([&] { return m.shutdown_requested.load(std::memory_order_acquire); },
                        Deadline::after_ms(1000), "SHUTDOWN from rank 0");
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
      for (int r = 1; r < n; ++r) t->send(r, Writer(Msg::kShutdown).take());
    });
    Status w = m.waiter.wait([&] { return m.byes.load(std::memory_order_acquire) >= n - 1 || m.lost.load(); },
                             Deadline::after_ms(close_ms), "BYE from every rank");
    if (!w.ok()) {
      m.lost.store(true);
      std::lock_guard<std::mutex> lk(m.mu);
      if (m.lost_status.ok())
        m.lost_status = deadline_exceeded("NetWorker::close: " + std::to_string(n - 1 - m.byes.load()) +
                                          " rank(s) did not answer SHUTDOWN within close_timeout_ms=" +
                                          std::to_string(close_ms));
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
