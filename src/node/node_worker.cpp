// NodeWorker: configuration, registration, startup (fork + READY), runs and
// close. The engine (engine.hpp) does the orchestration and scheduling.
#include "taskring/node/node_worker.hpp"

#include <dlfcn.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>

#include "child_main.hpp"
#include "child_process.hpp"
#include "chip_placement.hpp"
#include "dag/engine.hpp"
#include "domain_registry.hpp"
#include "local_endpoint.hpp"
#include "shared_region.hpp"
#include "taskring/base/align.hpp"
#include "taskring/base/cpus.hpp"
#include "taskring/base/knob_table.hpp"
#include "taskring/base/process_threads.hpp"
#include "taskring/kernels/tile_matmul.hpp"
#include "window_exchange.hpp"

namespace taskring::node {

namespace {

constexpr int kMaxChildren = 64;
constexpr uint64_t kPage = 4096;
// How long init() waits for just-joined threads to leave /proc/self/task.
constexpr uint64_t kThreadSettleMs = 100;

uint64_t round_page(uint64_t n) { return align_up(n, kPage); }

std::shared_ptr<RunState> failed_run(Status s) {
  auto r = std::make_shared<RunState>();
  r->status = std::move(s);
  r->done.store(true, std::memory_order_release);
  return r;
}

// OpenBLAS starts its thread pool when the library loads, long before
// main(). The pool is fork-aware: OpenBLAS itself shuts it down from a
// pthread_atfork handler and restarts it lazily on the next BLAS call. We
// call the same shutdown hook before counting threads, so the pool does not
// count against the fork-before-threads check. Looked up dynamically: the
// node does not depend on OpenBLAS.
void park_blas_pool() {
  using Shutdown = int (*)();
  if (auto fn = reinterpret_cast<Shutdown>(dlsym(RTLD_DEFAULT, "blas_thread_shutdown_"))) fn();
}

}  // namespace

struct NodeWorker::Impl {
  enum class State { kNew, kReady, kFailed, kClosed };

  NodeConfig cfg;
  std::vector<ChipCallable> chip_callables;
  std::vector<std::string> sub_names;
  std::vector<SubFunction> sub_fns;

  std::mutex mu;  // state, active submits
  std::condition_variable cv;
  State state = State::kNew;
  int active_submits = 0;

  SharedRegion heap;  // [ring | shared]
  SharedRegion bell_region;
  std::vector<SharedRegion> mailboxes;                  // subs first, then chips
  std::vector<std::shared_ptr<ChildProcess>> children;  // same order
  // Comm domains of the runs; declared before the engine, whose fence hooks
  // (run at its shutdown) use it.
  std::unique_ptr<DomainRegistry> domains;
  std::unique_ptr<Engine> engine;
  // Comm domains: how windows reach the chips, and one socket pair per
  // child (the parent's end here until an endpoint owns it, -1 for SUBs).
  std::unique_ptr<WindowExchange> exchange = make_memfd_window_exchange();
  std::vector<int> parent_socks, child_socks;
  ~Impl() {
    for (auto* v : {&parent_socks, &child_socks})
      for (int fd : *v)
        if (fd >= 0) ::close(fd);
  }

  std::mutex shared_mu;
  uint64_t shared_used = 0;

  // The bell region holds two bells: the parent's (children ring it on
  // completion) and the group bell (the parent rings it to start a group),
  // then one group countdown per chip (Endpoint::start_staged), then the
  // group gates (mailbox.hpp).
  ShmBell* bell() { return static_cast<ShmBell*>(bell_region.data()); }
  ShmBell* group_bell() { return bell() + 1; }
  std::atomic<uint32_t>* group_countdowns() { return reinterpret_cast<std::atomic<uint32_t>*>(bell() + 2); }
  GroupGate* group_gates() { return reinterpret_cast<GroupGate*>(group_countdowns() + kMaxChildren); }
  Mailbox* mailbox(size_t i) { return static_cast<Mailbox*>(mailboxes[i].data()); }
  int children_total() const { return cfg.sub_workers + cfg.chips; }

  Status validate() const;
  // The engine's settings for this node (init, once the children exist).
  EngineConfig engine_config();
  // The process that initialised the worker: its children, engine thread
  // and mailboxes belong to that process only (a fork's copy must not use
  // them). 0 before init.
  std::atomic<pid_t> owner_pid{0};
  // The thread now running an orchestration function: a submit() from it
  // would wait for its own run (a deadlock), so it is refused.
  std::atomic<std::thread::id> orchestrating{};
  // FAILED_PRECONDITION when called from a fork of the owner or from inside
  // an orchestration function of this worker; OK otherwise.
  Status check_caller(const char* api) const;
  // stall_timeout_ms from the config or TASKRING_NODE_STALL_TIMEOUT_MS.
  Status read_stall_timeout();
  uint64_t stall_timeout_ms = 0;
  std::string stall_knob;
  // The chip task watch's limit (EngineConfig::task_timeout_ms): the chips'
  // run timeout, plus the time a chip takes to stop a run and answer, from
  // the knobs the chips read in the node's env.
  Status read_task_timeout();
  uint64_t task_timeout_ms = 0;
  std::string task_timeout_knob;
  int sim_threads() const;
  Expected<bool> run_inline() const;
  // NodeConfig::chip_pin, then TASKRING_CHIP_PIN, then pin_chips_by_default.
  Expected<bool> pin_chips_here(bool inline_chips, int threads) const;
  Status start_children(Deadline deadline);
  Status wait_ready(Deadline deadline);
  // SHUTDOWN to every child, then SIGTERM, then SIGKILL of its group; reaps.
  bool stop_children(Deadline graceful, uint64_t term_ms = 200);
  std::string label(size_t i) const {
    return static_cast<int>(i) < cfg.sub_workers ? "SUB " + std::to_string(i)
                                                 : "chip " + std::to_string(static_cast<int>(i) - cfg.sub_workers);
  }
};

Status NodeWorker::Impl::validate() const {
  const std::string w = "NodeWorker::init: ";
  if (cfg.chips < 0 || cfg.chips > kMaxChildren)
    return invalid_argument(w + "chips " + std::to_string(cfg.chips) + " not in [0, 64]");
  if (cfg.sub_workers < 0 || cfg.sub_workers > kMaxChildren)
    return invalid_argument(w + "sub_workers " + std::to_string(cfg.sub_workers) + " not in [0, 64]");
  if (cfg.chips + cfg.sub_workers == 0) return invalid_argument(w + "a node needs at least one chip or SUB worker");
  if (cfg.runtime != "tmr" && cfg.runtime != "hbg" && cfg.runtime != "tensormap_and_ringbuffer" &&
      cfg.runtime != "host_build_graph")
    return invalid_argument(w + "runtime '" + cfg.runtime + "' is not tmr or hbg");
  if (cfg.chip_threads < 0 || cfg.chip_threads > 256)
    return invalid_argument(w + "chip_threads " + std::to_string(cfg.chip_threads) + " not in [0, 256]");
  if (auto inl = run_inline(); !inl.ok()) return inl.status().with_context(w + "env");
  // The chips validate it too, but only when the node leaves the thread
  // count to them: a bad value must not be dropped silently here.
  if (cfg.env)
    if (auto t = read_int_knob(cfg.env, "TASKRING_SIM_THREADS", 1, 256); !t.ok())
      return t.status().with_context(w + "env");
  if (cfg.heap_ring_bytes < HeapRing::kAlign || cfg.heap_ring_bytes > (1ull << 40))
    return invalid_argument(w + "heap_ring_bytes " + std::to_string(cfg.heap_ring_bytes) + " not in [1024, 2^40]");
  if (cfg.shared_bytes > (1ull << 40))
    return invalid_argument(w + "shared_bytes " + std::to_string(cfg.shared_bytes) + " exceeds 2^40");
  if (cfg.rank_base < 0 || cfg.rank_base > (1 << 20) - kMaxChildren)
    return invalid_argument(w + "rank_base " + std::to_string(cfg.rank_base) + " not in [0, 2^20 - 64]");
  if (cfg.startup_timeout_ms == 0) return invalid_argument(w + "startup_timeout_ms must be > 0");
  if (cfg.control_timeout_ms == 0) return invalid_argument(w + "control_timeout_ms must be > 0");
  if (cfg.comm_timeout_ms == 0) return invalid_argument(w + "comm_timeout_ms must be > 0");
  if (cfg.domain_cache < 0 || cfg.domain_cache > 64)
    return invalid_argument(w + "domain_cache " + std::to_string(cfg.domain_cache) + " not in [0, 64]");
  return Status::Ok();
}

Status NodeWorker::Impl::read_stall_timeout() {
  stall_timeout_ms = cfg.stall_timeout_ms;
  stall_knob = "NodeConfig::stall_timeout_ms=" + std::to_string(stall_timeout_ms);
  if (!cfg.env) return Status::Ok();
  auto knob = read_int_knob(cfg.env, taskring::knob("TASKRING_NODE_STALL_TIMEOUT_MS"));
  if (!knob.ok()) return knob.status().with_context("NodeWorker::init");
  if (*knob) {
    stall_timeout_ms = static_cast<uint64_t>(**knob);
    stall_knob = "TASKRING_NODE_STALL_TIMEOUT_MS=" + std::to_string(stall_timeout_ms);
  }
  return Status::Ok();
}

namespace {
// The defaults of TASKRING_RUN_TIMEOUT_MS and TASKRING_STALL_TIMEOUT_MS
// (the chip's knobs, src/chip/chip_knobs.hpp, which the node cannot include).
constexpr uint64_t kChipRunTimeoutMs = 60000;
constexpr uint64_t kChipStallTimeoutMs = 10000;
// After its run timeout, a threaded chip gives a stuck run the stall
// timeout to stop, then answers: the watch waits that long, and this much
// more for the answer to come (finalize, spans, a loaded host), so that a
// chip which can answer always does so itself, with its own error.
constexpr uint64_t kChipAnswerSlackMs = 1000;
}  // namespace

Status NodeWorker::Impl::read_task_timeout() {
  uint64_t run_ms = kChipRunTimeoutMs, stall_ms = kChipStallTimeoutMs;
  if (cfg.env) {
    auto run = read_int_knob(cfg.env, taskring::knob("TASKRING_RUN_TIMEOUT_MS"));
    if (!run.ok()) return run.status().with_context("NodeWorker::init");
    if (*run) run_ms = static_cast<uint64_t>(**run);
    auto stall = read_int_knob(cfg.env, taskring::knob("TASKRING_STALL_TIMEOUT_MS"));
    if (!stall.ok()) return stall.status().with_context("NodeWorker::init");
    if (*stall) stall_ms = static_cast<uint64_t>(**stall);
  }
  task_timeout_ms = run_ms + stall_ms + kChipAnswerSlackMs;
  task_timeout_knob = "the chip run timeout TASKRING_RUN_TIMEOUT_MS=" + std::to_string(run_ms) +
                      " (+ TASKRING_STALL_TIMEOUT_MS=" + std::to_string(stall_ms) + " and " +
                      std::to_string(kChipAnswerSlackMs) + " ms for the chip to stop the run and answer)";
  return Status::Ok();
}

int NodeWorker::Impl::sim_threads() const {
  if (cfg.chip_threads > 0) return cfg.chip_threads;
  if (cfg.env) {
    if (auto v = cfg.env("TASKRING_SIM_THREADS")) {
      int n = std::atoi(v->c_str());
      if (n >= 1 && n <= 256) return n;  // the chip validates it again and names it
    }
  }
  int hw = static_cast<int>(std::thread::hardware_concurrency());
  if (hw < 1) hw = 1;
  return std::max(1, hw / std::max(1, cfg.chips));
}

namespace {

// A NodeConfig on/off/auto switch: kOn or kOff decide; under kAuto the
// boolean knob `knob` in `env` decides when set, else `fallback()`.
template <typename Switch, typename Fallback>
Expected<bool> switch_or_knob(Switch value, const EnvLookup& env, const char* knob, Fallback&& fallback) {
  if (value != Switch::kAuto) return value == Switch::kOn;
  if (env) {
    TASKRING_ASSIGN_OR_RETURN(auto set, read_bool_knob(env, knob));
    if (set) return *set;
  }
  return fallback();
}

}  // namespace

Expected<bool> NodeWorker::Impl::run_inline() const {
  return switch_or_knob(cfg.chip_inline, cfg.env, "TASKRING_RUN_INLINE",
                        [&] { return run_chips_inline_by_default(cfg.chips, usable_cpus()); });
}

Expected<bool> NodeWorker::Impl::pin_chips_here(bool inline_chips, int threads) const {
  return switch_or_knob(cfg.chip_pin, cfg.env, "TASKRING_CHIP_PIN",
                        [&] { return pin_chips_by_default(cfg.chips, usable_cpus(), inline_chips, threads); });
}

Status NodeWorker::Impl::start_children(Deadline deadline) {
  const pid_t parent = getpid();
  const int threads = sim_threads();
  TASKRING_ASSIGN_OR_RETURN(const bool inline_chips, run_inline());
  TASKRING_ASSIGN_OR_RETURN(const bool pin_chips, pin_chips_here(inline_chips, threads));
  for (size_t i = 0; i < mailboxes.size(); ++i) {
    ChildSpec spec;
    const bool sub = static_cast<int>(i) < cfg.sub_workers;
    spec.kind = sub ? ChildKind::kSub : ChildKind::kChip;
    spec.index = sub ? static_cast<int>(i) : static_cast<int>(i) - cfg.sub_workers;
    spec.mailbox = mailbox(i);
    spec.parent_bell = bell();
    spec.group_bell = bell_either_available() ? group_bell() : nullptr;
    spec.group_countdowns = group_countdowns();
    spec.group_gates = group_gates();
    spec.parent_pid = parent;
    spec.chip_callables = &chip_callables;
    spec.sub_functions = &sub_fns;
    spec.runtime = cfg.runtime;
    spec.sim_threads = threads;
    spec.run_inline = inline_chips;
    spec.pin_slot = !sub && pin_chips ? spec.index : -1;
    spec.rank_base = cfg.rank_base;
    spec.env = cfg.env;
    spec.hook = cfg.child_init;
    spec.comm_socket = child_socks[i];
    spec.foreign_sockets = parent_socks;
    spec.exchange = sub ? nullptr : exchange.get();
    pid_t pid = fork();
    if (pid < 0) return unavailable("NodeWorker::init: fork of " + label(i) + " failed: " + std::strerror(errno));
    if (pid == 0) child_main(spec);
    setpgid(pid, pid);  // also done by the child; whichever runs first wins
    if (child_socks[i] >= 0) {
      ::close(child_socks[i]);  // only that child keeps its end
      child_socks[i] = -1;
    }
    children.push_back(std::make_shared<ChildProcess>(pid, label(i)));
  }
  return wait_ready(deadline);
}

Status NodeWorker::Impl::wait_ready(Deadline deadline) {
  Status bad;
  auto settled = [&] {
    bool all = true;
    for (size_t i = 0; i < children.size(); ++i) {
      auto s = static_cast<InitState>(mailbox(i)->init_state.load(std::memory_order_acquire));
      if (s == InitState::kFailed) {
        bad = mailbox(i)->init_result.load().with_context(children[i]->name() + " failed its init");
        return true;
      }
      if (s != InitState::kReady) all = false;
    }
    return all;
  };
  auto alive = [&]() -> Status {
    for (size_t i = 0; i < children.size(); ++i) {
      if (static_cast<InitState>(mailbox(i)->init_state.load(std::memory_order_acquire)) != InitState::kStarting)
        continue;
      Status c = children[i]->check();
      if (!c.ok()) return c.with_context("NodeWorker::init: child before INIT_READY");
    }
    return Status::Ok();
  };
  Status w = bell_wait(*bell(), settled, alive, deadline, "INIT_READY", 1'000'000, 1000);
  if (!w.ok()) {
    if (w.code() != StatusCode::kDeadlineExceeded) return w;
    std::string slow;
    for (size_t i = 0; i < children.size(); ++i)
      if (static_cast<InitState>(mailbox(i)->init_state.load()) != InitState::kReady)
        slow += (slow.empty() ? "" : ", ") + children[i]->name();
    return deadline_exceeded("NodeWorker::init: not READY within startup_timeout_ms=" +
                             std::to_string(cfg.startup_timeout_ms) + ": " + slow);
  }
  if (!bad.ok()) return bad.with_context("NodeWorker::init");
  return Status::Ok();
}

bool NodeWorker::Impl::stop_children(Deadline graceful, uint64_t term_ms) {
  for (size_t i = 0; i < children.size(); ++i) {
    mailbox(i)->shutdown.store(1, std::memory_order_release);
    bell_ring(mailbox(i)->child_bell);
  }
  for (auto& c : children) c->wait_exit(graceful);
  for (auto& c : children)
    if (!c->reaped()) c->signal_group(SIGTERM);
  const Deadline term = Deadline::after_ms(term_ms);
  for (auto& c : children) c->wait_exit(term);
  for (auto& c : children)
    if (!c->reaped()) c->signal_group(SIGKILL);
  const Deadline kill = Deadline::after_ms(5000);
  bool all = true;
  for (auto& c : children) all &= c->wait_exit(kill);
  return all;
}

// ---------------------------------------------------------------------------

NodeWorker::NodeWorker(NodeConfig config) : impl_(std::make_unique<Impl>()) { impl_->cfg = std::move(config); }

NodeWorker::~NodeWorker() {
  const pid_t owner = impl_->owner_pid.load(std::memory_order_relaxed);
  if (owner != 0 && owner != getpid()) {
    // A fork's copy: the engine thread, the children and the watcher's
    // descriptors are the owner's; destroying them here would join a thread
    // that does not exist in this process and stop the owner's watcher.
    (void)impl_.release();
    return;
  }
  (void)close();
}

Status NodeWorker::Impl::check_caller(const char* api) const {
  const pid_t owner = owner_pid.load(std::memory_order_relaxed);
  if (owner != 0 && owner != getpid())
    return failed_precondition(std::string(api) + ": this worker belongs to process " + std::to_string(owner) +
                               ", and this is process " + std::to_string(getpid()) +
                               " (a fork of it); make a new worker here");
  if (orchestrating.load(std::memory_order_acquire) == std::this_thread::get_id())
    return failed_precondition(std::string(api) +
                               ": called from inside this worker's orchestration function; runs do not nest "
                               "(submit the work from the function instead)");
  return Status::Ok();
}

const NodeConfig& NodeWorker::config() const { return impl_->cfg; }

Expected<int> NodeWorker::register_chip(const ChipCallable& callable) {
  std::lock_guard<std::mutex> lk(impl_->mu);
  if (impl_->state != Impl::State::kNew)
    return failed_precondition("NodeWorker::register_chip('" + callable.name +
                               "'): only before init(); children get callables through the fork");
  if (callable.entry == nullptr && callable.orchestration_library.empty())
    return invalid_argument("NodeWorker::register_chip('" + callable.name +
                            "'): needs an entry function or an orchestration library");
  impl_->chip_callables.push_back(callable);
  return static_cast<int>(impl_->chip_callables.size()) - 1;
}

Expected<int> NodeWorker::register_sub(const std::string& name, SubFunction fn) {
  std::lock_guard<std::mutex> lk(impl_->mu);
  if (impl_->state != Impl::State::kNew)
    return failed_precondition("NodeWorker::register_sub('" + name + "'): only before init()");
  if (name.empty()) return invalid_argument("NodeWorker::register_sub: empty name");
  if (!fn) return invalid_argument("NodeWorker::register_sub('" + name + "'): empty function");
  for (const std::string& n : impl_->sub_names)
    if (n == name)
      return Status(StatusCode::kAlreadyExists, "NodeWorker::register_sub: '" + name + "' is already registered");
  impl_->sub_names.push_back(name);
  impl_->sub_fns.push_back(std::move(fn));
  return static_cast<int>(impl_->sub_names.size()) - 1;
}

Expected<int> NodeWorker::sub_id(const std::string& name) const {
  for (size_t i = 0; i < impl_->sub_names.size(); ++i)
    if (impl_->sub_names[i] == name) return static_cast<int>(i);
  return not_found("NodeWorker::sub_id: no SUB callable named '" + name + "'");
}

EngineConfig NodeWorker::Impl::engine_config() {
  EngineConfig ec;
  for (const ChipCallable& c : chip_callables) ec.chip_callables.push_back(c.name);
  ec.sub_callables = sub_names;
  SharedRegion* heap_region = &heap;
  ec.host_visible = [heap_region](uint64_t a, uint64_t n) { return heap_region->contains(a, n); };
  ec.heap_base = reinterpret_cast<uintptr_t>(heap.data());
  ec.heap_bytes = cfg.heap_ring_bytes;
  ec.heap_wait_ms = cfg.heap_wait_ms;
  ec.control_timeout_ms = cfg.control_timeout_ms;
  ec.stall_timeout_ms = stall_timeout_ms;
  ec.stall_knob = stall_knob;
  ec.task_timeout_ms = task_timeout_ms;
  ec.task_timeout_knob = task_timeout_knob;
  ec.api = EngineApi{"NodeWorker", "NodeConfig::sub_workers", "NodeConfig::heap_ring_bytes"};
  Impl* mp = this;
  ec.at_every_fence = [mp](const RunFence& f) { return mp->domains ? mp->domains->at_every_fence(f) : Status::Ok(); };
  ec.waiters_drive = true;
  // The run's waiter yields before it parks only where the children alone
  // fit the CPUs: there its yields take only CPU time no child wants, while
  // with more children than CPUs each yield that lands lengthens some chip's
  // turn (same-run rotations of bench/python/comm_rotation.py under load:
  // faster with 2 chips on 2 CPUs, slower with 4; the lead's quiet A/B is
  // in docs/benchmarks.md#python-comm).
  ec.driver_yield_ns = children_total() <= usable_cpus() ? kDriverYieldNs : 0;
  return ec;
}

Status NodeWorker::init() {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lk(m.mu);
  if (m.state != Impl::State::kNew)
    return failed_precondition(m.state == Impl::State::kReady ? "NodeWorker::init: already initialised"
                                                              : "NodeWorker::init: init() runs once; this worker "
                                                                "failed or was closed, make a new one");
  const Deadline deadline = Deadline::after_ms(m.cfg.startup_timeout_ms);
  // The rollback must fit in the same deadline: READY is awaited until
  // `reserve` before it, the rest goes to SHUTDOWN and SIGTERM (SIGKILL and
  // the reap that follows take microseconds).
  const uint64_t reserve_ns = std::min<uint64_t>(250'000'000, m.cfg.startup_timeout_ms * 1'000'000 / 5);
  const Deadline ready_by{deadline.at_mono_ns - reserve_ns};
  Status v = m.validate();
  if (v.ok()) v = m.read_stall_timeout();
  if (v.ok()) v = m.read_task_timeout();
  if (!v.ok()) {
    m.state = Impl::State::kFailed;
    return v;
  }
  // Set BLAS single-threaded here, once, before the pool is parked: a chip
  // child that did it after the fork (ChipWorker::create does, through the
  // built-in kernels) made OpenBLAS start a pool thread in every child,
  // which then spun (sched_yield) for its timeout, a few hundred ms, on the
  // cores the chips share, and never got work.
  tile::ensure_single_threaded_math();
  park_blas_pool();
  // The pool threads were joined just now; they may still be listed for a moment.
  Expected<ProcessThreads> threads = process_threads(1, Deadline::after_ms(kThreadSettleMs));
  if (!threads.ok()) {
    m.state = Impl::State::kFailed;
    return threads.status();
  }
  if (threads->count != 1) {
    m.state = Impl::State::kFailed;
    return failed_precondition("NodeWorker::init: this process runs " + std::to_string(threads->count) + " threads (" +
                               threads->names +
                               "); every child must be forked before any thread starts (a fork copies "
                               "only the calling thread, and locks the others hold stay locked in the child). "
                               "Create and init the NodeWorker before starting threads");
  }
  auto fail = [&](Status s) {
    const uint64_t left_ns = deadline.remaining_ns();
    m.stop_children(Deadline::after_ns(left_ns / 2), left_ns / 2 / 1'000'000);
    m.state = Impl::State::kFailed;
    return s;
  };
  auto heap = SharedRegion::map(
      round_page(m.cfg.heap_ring_bytes) + round_page(std::max<uint64_t>(m.cfg.shared_bytes, 1)), "node shared heap");
  if (!heap.ok()) return fail(heap.status());
  m.heap = std::move(*heap);
  auto bell = SharedRegion::map(kPage, "node bell");
  if (!bell.ok()) return fail(bell.status());
  m.bell_region = std::move(*bell);
  // The parent and every child hand work to each other: spin before a park
  // only while they all fit the CPUs.
  const uint32_t spin = spin_budget(kDefaultSpin, m.children_total() + 1);
  static_assert(2 * sizeof(ShmBell) + kMaxChildren * sizeof(std::atomic<uint32_t>) + kGroupGates * sizeof(GroupGate) <=
                kPage);
  new (m.bell_region.data()) ShmBell();
  new (m.group_bell()) ShmBell();
  for (int i = 0; i < kMaxChildren; ++i) new (m.group_countdowns() + i) std::atomic<uint32_t>(0);
  for (int i = 0; i < kGroupGates; ++i) new (m.group_gates() + i) GroupGate();
  m.bell()->spin = spin;
  for (int i = 0; i < m.children_total(); ++i) {
    auto r = SharedRegion::map(round_page(sizeof(Mailbox)), "mailbox");
    if (!r.ok()) return fail(r.status());
    new (r->data()) Mailbox();
    static_cast<Mailbox*>(r->data())->child_bell.spin = spin;
    m.mailboxes.push_back(std::move(*r));
  }
  for (int i = 0; i < m.children_total(); ++i) {
    int sv[2] = {-1, -1};
    if (i >= m.cfg.sub_workers && socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) != 0)
      return fail(unavailable(std::string("NodeWorker::init: socketpair for chip ") +
                              std::to_string(i - m.cfg.sub_workers) + " failed: " + std::strerror(errno)));
    m.parent_socks.push_back(sv[0]);
    m.child_socks.push_back(sv[1]);
  }
  Status s = m.start_children(ready_by);
  if (!s.ok()) return fail(s);

  EngineConfig ec = m.engine_config();
  std::vector<std::unique_ptr<Endpoint>> chips, subs;
  for (size_t i = 0; i < m.children.size(); ++i) {
    auto ep = std::make_unique<LocalEndpoint>(m.mailbox(i), m.bell(), m.children[i], m.parent_socks[i]);
    m.parent_socks[i] = -1;  // the endpoint owns it now
    (static_cast<int>(i) < m.cfg.sub_workers ? subs : chips).push_back(std::move(ep));
  }
  m.engine = std::make_unique<Engine>(std::move(ec), std::move(chips), std::move(subs), m.bell());
  DomainRegistryConfig dc;
  dc.exchange = m.exchange.get();
  dc.global = m.cfg.global_domains.get();
  dc.comm_timeout_ms = m.cfg.comm_timeout_ms;
  dc.cache = m.cfg.domain_cache;
  m.domains = std::make_unique<DomainRegistry>(*m.engine, dc);
  // The first thread of the parent: every fork is behind us.
  if (bell_either_available()) m.engine->set_group_bell(m.group_bell(), m.group_countdowns(), m.group_gates());
  m.engine->start();
  m.owner_pid.store(getpid(), std::memory_order_relaxed);
  m.state = Impl::State::kReady;
  return Status::Ok();
}

Expected<void*> NodeWorker::alloc_shared(uint64_t bytes) {
  Impl& m = *impl_;
  {
    std::lock_guard<std::mutex> lk(m.mu);
    if (m.state != Impl::State::kReady)
      return failed_precondition("NodeWorker::alloc_shared: the shared heap exists only after a successful init()");
  }
  std::lock_guard<std::mutex> lk(m.shared_mu);
  const uint64_t base = round_page(m.cfg.heap_ring_bytes);
  const uint64_t cap = m.heap.size() - base;
  const uint64_t n = align_up(std::max<uint64_t>(bytes, 1), 64);
  if (n > cap - m.shared_used)
    return resource_exhausted("NodeWorker::alloc_shared: " + std::to_string(bytes) + " B requested, " +
                              std::to_string(cap - m.shared_used) +
                              " B left of NodeConfig::shared_bytes=" + std::to_string(m.cfg.shared_bytes));
  void* p = static_cast<char*>(m.heap.data()) + base + m.shared_used;
  m.shared_used += n;
  return p;
}

RunHandle NodeWorker::submit(OrchFunction orch, SubmitOptions options) {
  Impl& m = *impl_;
  if (Status c = m.check_caller("NodeWorker::submit"); !c.ok()) return RunHandle(failed_run(c));
  {
    std::lock_guard<std::mutex> lk(m.mu);
    if (m.state != Impl::State::kReady)
      return RunHandle(
          failed_run(failed_precondition(m.state == Impl::State::kNew ? "NodeWorker::submit: call init() first"
                                                                      : "NodeWorker::submit: the worker "
                                                                        "failed its init or is closed")));
    ++m.active_submits;
  }
  std::shared_ptr<RunState> run = m.engine->run_orchestration(
      [&m, &orch](Orchestrator& o) {
        struct Mark {  // cleared however the function ends
          std::atomic<std::thread::id>& at;
          explicit Mark(std::atomic<std::thread::id>& a) : at(a) {
            at.store(std::this_thread::get_id(), std::memory_order_release);
          }
          ~Mark() { at.store(std::thread::id{}, std::memory_order_release); }
        } mark(m.orchestrating);
        return orch(o);
      },
      m.domains.get(), options.caller_waits);
  {
    std::lock_guard<std::mutex> lk(m.mu);
    --m.active_submits;
  }
  m.cv.notify_all();
  return RunHandle(std::move(run));
}

Status NodeWorker::run(OrchFunction orch, Deadline deadline) {
  return submit(std::move(orch), SubmitOptions{.caller_waits = true}).wait(deadline);
}

Status NodeWorker::close_now() {
  Impl& m = *impl_;
  TASKRING_RETURN_IF_ERROR(m.check_caller("NodeWorker::close_now"));
  {
    std::lock_guard<std::mutex> lk(m.mu);
    if (m.state == Impl::State::kReady)
      for (auto& c : m.children) c->signal_group(SIGKILL);  // a no-op for one already reaped
  }
  return close();
}

Status NodeWorker::close() {
  Impl& m = *impl_;
  {
    const pid_t owner = m.owner_pid.load(std::memory_order_relaxed);
    if (owner != 0 && owner != getpid()) return Status::Ok();  // a fork's copy: nothing here is its to close
  }
  TASKRING_RETURN_IF_ERROR(m.check_caller("NodeWorker::close"));
  std::unique_lock<std::mutex> lk(m.mu);
  if (m.state == Impl::State::kClosed) return Status::Ok();
  if (m.state != Impl::State::kReady) {
    m.state = Impl::State::kClosed;  // a failed init rolled its children back already
    return Status::Ok();
  }
  const Deadline d = Deadline::after_ms(m.cfg.close_timeout_ms);
  lk.unlock();
  // Cancel first, so an orchestration function racing close() sees its
  // submits fail fast and returns.
  m.engine->shutdown(aborted("NodeWorker::close: the worker is closing"), d);
  lk.lock();
  while (m.active_submits > 0 && !d.expired()) m.cv.wait_for(lk, std::chrono::milliseconds(20));
  const bool reaped = m.stop_children(d);
  if (!reaped) {
    std::string left;
    for (auto& c : m.children)
      if (!c->reaped()) left += (left.empty() ? "" : ", ") + c->name();
    return unavailable("NodeWorker::close: not reaped after SIGKILL: " + left + "; call close() again");
  }
  m.state = Impl::State::kClosed;
  return Status::Ok();
}

Status NodeWorker::ping_chip(int chip, uint64_t hold_ns, std::atomic<uint32_t>* started) {
  Impl& m = *impl_;
  {
    std::lock_guard<std::mutex> lk(m.mu);
    if (m.state != Impl::State::kReady) return failed_precondition("NodeWorker::ping_chip: the worker is not running");
  }
  if (started != nullptr && !m.heap.contains(reinterpret_cast<uintptr_t>(started), sizeof(*started)))
    return invalid_argument("NodeWorker::ping_chip: `started` is not in the shared heap");
  ControlRequest r;
  r.op = ControlOp::kNoop;
  r.args[0] = hold_ns;
  r.args[1] = 1;
  r.args[2] = reinterpret_cast<uintptr_t>(started);
  auto v = m.engine->control(chip, r, "NodeWorker::ping_chip");
  return v.status();
}

Expected<ChipRunTotals> NodeWorker::take_chip_run_totals(int chip) {
  Impl& m = *impl_;
  {
    std::lock_guard<std::mutex> lk(m.mu);
    if (m.state != Impl::State::kReady)
      return failed_precondition("NodeWorker::take_chip_run_totals: the worker is not running");
  }
  if (chip < 0 || chip >= m.cfg.chips)
    return out_of_range("NodeWorker::take_chip_run_totals: chip " + std::to_string(chip) + " outside 0.." +
                        std::to_string(m.cfg.chips - 1));
  Mailbox* box = m.mailbox(static_cast<size_t>(m.cfg.sub_workers + chip));
  // Acquire pairs with the child's release after each task: the totals it
  // wrote before finishing its last task are visible.
  (void)box->finished.load(std::memory_order_acquire);
  ChipRunTotals t = box->run_totals;
  box->run_totals = ChipRunTotals{};
  t.dispatches = box->dispatches;  // parent-written
  box->dispatches = 0;
  return t;
}

int NodeWorker::cached_domains() const {
  const Impl& m = *impl_;
  return m.domains ? m.domains->cached() : 0;
}

int NodeWorker::live_domains() const {
  const Impl& m = *impl_;
  return m.domains ? m.domains->live() : 0;
}

int NodeWorker::chip_pid(int i) const {
  const Impl& m = *impl_;
  size_t k = static_cast<size_t>(m.cfg.sub_workers + i);
  if (i < 0 || i >= m.cfg.chips || k >= m.children.size()) return -1;
  return m.children[k]->pid();
}

int NodeWorker::sub_pid(int i) const {
  const Impl& m = *impl_;
  if (i < 0 || i >= m.cfg.sub_workers || static_cast<size_t>(i) >= m.children.size()) return -1;
  return m.children[static_cast<size_t>(i)]->pid();
}

}  // namespace taskring::node
