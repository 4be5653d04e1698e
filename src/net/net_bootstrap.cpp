// NetWorker::init in numbered steps: 0 check the config, 1 the node (forks
// before MPI starts any thread), 2 MPI, 3 the services (transport, data
// mover, rank server; rank 0's engine), 4 HELLO to rank 0, 5 rank 0 checks
// every HELLO and answers WELCOME, 6 every rank waits for it, 7 live.
// Every rank reaches the handshake even when its node failed, so rank 0
// can name it and every rank fails the same way.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <thread>

#include "launcher_rank.hpp"
#include "net_worker_impl.hpp"

namespace taskring::net {

namespace {
std::string host_name() {
  char h[256] = {};
  gethostname(h, sizeof(h) - 1);
  return h;
}
}  // namespace

int NetWorker::launcher_rank() {
  auto r = read_launcher_rank(process_env());
  return r.ok() ? *r : 0;  // init() reports a malformed variable
}

Status NetWorker::init() {
  Impl& m = *impl_;
  if (m.state != Impl::State::kNew) return failed_precondition("NetWorker::init: init() runs once; make a new worker");
  m.state = Impl::State::kFailed;
  const Deadline deadline = Deadline::after_ms(m.cfg.startup_timeout_ms);
  TASKRING_RETURN_IF_ERROR(m.check_config());
  const Status node_status = m.init_node();
  int provided = 0;
  TASKRING_RETURN_IF_ERROR(m.start_mpi(&provided));
  Status mine = node_status;
  // A rank number that disagrees with Open MPI's would misname every span.
  const char* var = "";
  auto launcher = read_launcher_rank(process_env(), &var);
  if (launcher.ok() && std::string_view(var) == kLauncherRankVars[0] && *launcher != m.rank)
    mine =
        internal_error("MPI rank " + std::to_string(m.rank) + " differs from " + var + "=" + std::to_string(*launcher));
  m.start_services(mine, provided);
  m.send_hello(mine);
  if (m.rank == 0) TASKRING_RETURN_IF_ERROR(m.collect_hellos(deadline));
  TASKRING_RETURN_IF_ERROR(m.await_welcome(deadline));
  m.go_live();
  return Status::Ok();
}

Status NetWorker::Impl::fail_init(Status s) {
  init_error = std::move(s);
  return init_error;
}

// 0. What init() needs of the config, and the launcher's rank variable.
Status NetWorker::Impl::check_config() const {
  if (cfg.startup_timeout_ms == 0 || cfg.peer_timeout_ms == 0 || cfg.transfer_timeout_ms == 0)
    return invalid_argument("NetWorker::init: startup_timeout_ms, peer_timeout_ms and transfer_timeout_ms must be > 0");
  if (cfg.poll_window_us > 1'000'000)
    return invalid_argument("NetWorker::init: poll_window_us " + std::to_string(cfg.poll_window_us) +
                            " not in [0, 1000000]");
  if (cfg.pool_bytes == 0 || cfg.pool_bytes > (1ull << 40) || cfg.staging_bytes > (1ull << 40))
    return invalid_argument("NetWorker::init: pool_bytes must be in [1, 2^40], staging_bytes at most 2^40");
  auto launcher = read_launcher_rank(process_env());
  if (!launcher.ok()) return launcher.status().with_context("NetWorker::init");
  return Status::Ok();
}

// 1. The node: forks its children before MPI starts any thread. Its share
// of the one startup deadline (three quarters) was set in the constructor.
Status NetWorker::Impl::init_node() {
  Status s = node->init();
  if (s.ok()) {
    auto p = node->alloc_shared(cfg.pool_bytes);
    auto st = node->alloc_shared(std::max<uint64_t>(cfg.staging_bytes, 1));
    if (!p.ok()) return p.status();
    if (!st.ok()) return st.status();
    pool = static_cast<char*>(*p);
    staging = static_cast<char*>(*st);
  }
  if (s.ok() && cfg.node_setup) {
    try {
      s = cfg.node_setup(*node);
    } catch (const std::exception& e) {
      s = internal_error(std::string("threw: ") + e.what());
    }
    if (!s.ok()) s = s.with_context("NetConfig::node_setup");
  }
  return s;
}

// 2. MPI. MPI_THREAD_MULTIPLE lets the scheduler and the executors send
// their control messages themselves (one thread hop less each way, see
// transport.hpp); SERIALIZED suffices.
Status NetWorker::Impl::start_mpi(int* provided) {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, provided);
    we_initialized_mpi = true;
  } else {
    MPI_Query_thread(provided);
  }
  if (we_initialized_mpi && *provided < MPI_THREAD_SERIALIZED)
    abort_job("the MPI library provides thread level " + std::to_string(*provided) +
              "; taskring's progress thread needs MPI_THREAD_SERIALIZED");
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (size > kMaxRanks)  // every rank fails alike; close() finalises
    return fail_init(
        invalid_argument("NetWorker::init: " + std::to_string(size) + " ranks; at most " + std::to_string(kMaxRanks)));
  return Status::Ok();
}

// 3. The transport and what runs on it; the rank server only where the
// node is up, the engine on rank 0.
void NetWorker::Impl::start_services(const Status& node_status, int provided) {
  own = std::make_unique<BufferTable>(rank, cfg.pool_bytes);
  transport = std::make_unique<Transport>(
      comm, rank, size, [this](int src, Msg type, Reader& r) { handle(src, type, r); }, cfg.poll_window_us * 1000);
  // Collective: every rank that got here (the size check is the same on
  // every rank) opens its doorbell before any message is sent.
  if (cfg.fast_paths) {
    transport->open_doorbells();
    transport->set_multiple(provided >= MPI_THREAD_MULTIPLE);
  }
  mover = std::make_unique<DataMover>(*transport, *own, pool);
  domains->bind(transport.get(), rank, size, cfg.node.comm_timeout_ms);
  if (node_status.ok()) {
    RankServerConfig sc;
    sc.names = names;
    sc.fns = fns;
    sc.staging = staging;
    sc.staging_bytes = cfg.staging_bytes;
    sc.transfer_timeout_ms = cfg.transfer_timeout_ms;
    // The executor probes for its next TASK only where that can pay: a
    // direct channel, and no more ranks on this host than it has CPUs (each
    // rank's hand-off thread can then run; mpirun binds such ranks to a core
    // each, so the affinity mask, base/cpus.hpp, would say 1); else it parks
    // at once.
    const unsigned host_cpus = std::thread::hardware_concurrency();
    const bool spin =
        transport->multiple() && host_cpus > 0 && static_cast<unsigned>(transport->host_ranks()) <= host_cpus;
    sc.spin_ns = spin ? cfg.poll_window_us * 1000 : 0;
    server = std::make_unique<RankServer>(*transport, *mover, *own, *node, std::move(sc));
  }
  if (rank == 0) {
    hellos.resize(static_cast<size_t>(size));
    hello_ok.assign(static_cast<size_t>(size), false);
    engine = make_engine();
  }
  transport->start();
  if (server) server->start();
}

// The node engine reused at L4: one endpoint per rank, each a whole node.
std::unique_ptr<node::Engine> NetWorker::Impl::make_engine() {
  // The scheduler parks on rank 0's engine doorbell, which the ranks ring
  // after a direct COMPLETION (Transport::Channel::kEngine).
  node::ShmBell* bell = transport->doorbell(Transport::Channel::kEngine);
  std::vector<std::unique_ptr<node::Endpoint>> eps;
  for (int r = 0; r < size; ++r) {
    mirrors.push_back(std::make_unique<BufferTable>(r, 0));
    auto ep = std::make_unique<MpiEndpoint>(r, "rank " + std::to_string(r), *transport, bell);
    endpoints.push_back(ep.get());
    eps.push_back(std::move(ep));
  }
  node::EngineConfig ec;
  ec.chip_callables = names;
  ec.host_visible = [](uint64_t, uint64_t) { return false; };
  ec.check_tensor = [this](const ChipTensor& t) { return check_tensor(t); };
  ec.api = node::EngineApi{"NetWorker", "", ""};
  ec.target_word = "rank";
  ec.span_family = "network";  // network.run: upstream's L4 word; the trace analyser skips it
  ec.control_timeout_ms = cfg.transfer_timeout_ms;
  // The threads that orchestrate and wait drive the runs: an endpoint's
  // start and poll call MPI only under MPI_THREAD_MULTIPLE (Transport's
  // direct paths), where any thread may.
  ec.waiters_drive = true;
  return std::make_unique<node::Engine>(std::move(ec), std::move(eps), std::vector<std::unique_ptr<node::Endpoint>>{},
                                        bell);
}

// 4. HELLO to rank 0 (rank 0 too, from itself): who I am, my node's result.
void NetWorker::Impl::send_hello(const Status& node_status) {
  HelloMsg h;
  h.protocol = cfg.protocol_version;
  h.version = std::string(TASKRING_NET_VERSION) + " " + __VERSION__;
  h.pid = static_cast<uint32_t>(getpid());
  h.host = host_name();
  h.node = node_status;
  h.names = names;
  h.job = my_job();
  auto msg = std::make_shared<std::vector<char>>(h.encode());
  Transport* t = transport.get();
  t->post([t, msg] { t->send(0, std::move(*msg)); });
}

// 5. Rank 0: every HELLO, or the ranks that sent none; the verdict goes to
// every rank that spoke. MPI_Init is not bounded by us and may eat the
// deadline; the handshake still gets kMinHandshakeMs, so the ranks that are
// up are told apart from those that are not (the error names the latter).
Status NetWorker::Impl::collect_hellos(Deadline deadline) {
  const Deadline hello_by{std::max(deadline.at_mono_ns, mono_ns() + kMinHandshakeMs * 1'000'000)};
  Status w = waiter.wait([&] { return hello_count.load(std::memory_order_acquire) >= size; }, hello_by,
                         "HELLO from every rank");
  Status verdict;
  std::vector<int> said;
  {
    std::lock_guard<std::mutex> lk(mu);
    std::string missing;
    for (int r = 0; r < size; ++r) {
      if (hellos[static_cast<size_t>(r)].protocol != 0)
        said.push_back(r);
      else
        missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    }
    if (!w.ok())
      verdict = deadline_exceeded("no HELLO from rank(s) " + missing +
                                  " within startup_timeout_ms=" + std::to_string(cfg.startup_timeout_ms));
  }
  if (verdict.ok()) verdict = check_hellos();
  auto wmsg = std::make_shared<std::vector<char>>(WelcomeMsg{verdict}.encode());
  Transport* t = transport.get();
  t->post([t, wmsg, said] {
    for (int r : said) t->send(r, *wmsg);
  });
  if (!w.ok()) {
    lost.store(true);
    std::lock_guard<std::mutex> lk(mu);
    lost_status = verdict;
  }
  // Rank 0 knows the verdict; its own WELCOME adds nothing.
  if (!verdict.ok()) return fail_init(verdict.with_context("NetWorker::init"));
  return Status::Ok();
}

// 6. Every rank: READY (or the job's error) from rank 0.
Status NetWorker::Impl::await_welcome(Deadline deadline) {
  const Deadline welcome_by{std::max(deadline.at_mono_ns, mono_ns() + 2 * kMinHandshakeMs * 1'000'000)};
  Status w = waiter.wait([&] { return welcomed.load(std::memory_order_acquire); }, welcome_by, "READY from rank 0");
  if (!w.ok()) {
    (void)fail_init(w.with_context("NetWorker::init"));
    {
      std::lock_guard<std::mutex> lk(mu);
      lost_status = init_error;
    }
    lost.store(true);
    return init_error;
  }
  std::lock_guard<std::mutex> lk(mu);
  if (!welcome.ok()) return fail_init(welcome.with_context("NetWorker::init"));
  return Status::Ok();
}

// 7. Ready: liveness from now on, the engine on rank 0.
void NetWorker::Impl::go_live() {
  std::vector<int> peers;
  if (rank == 0) {
    for (int r = 1; r < size; ++r) peers.push_back(r);
  } else {
    peers.push_back(0);
  }
  const uint64_t timeout_ns = cfg.peer_timeout_ms * 1'000'000;
  Transport* t = transport.get();
  t->post([this, t, peers, timeout_ns] {
    t->watch(peers, timeout_ns / 8, timeout_ns, [this](int p, uint64_t ms) { on_lost(p, ms); });
  });
  for (int r = 0; r < static_cast<int>(endpoints.size()); ++r)
    endpoints[static_cast<size_t>(r)]->set_name(rank_name(r));
  if (engine) engine->start();
  state = State::kReady;
}

}  // namespace taskring::net
