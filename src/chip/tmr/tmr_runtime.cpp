#include "tmr_runtime.hpp"

#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "exec/address_map.hpp"
#include "exec/kernel_launch.hpp"
#include "exec/sync_start.hpp"
#include "taskring/base/clock.hpp"
#include "taskring/log/logger.hpp"

namespace taskring::tmr {

namespace {

TmrRuntime* self(PTO2Runtime* rt) { return reinterpret_cast<TmrRuntime::ApiHandle*>(rt)->owner; }

TaskOutputTensors op_submit(PTO2Runtime* rt, const MixedKernels& k, const CoreTaskArgs& a) {
  return self(rt)->submit(k, a, false, false);
}
TaskOutputTensors op_dummy(PTO2Runtime* rt, const CoreTaskArgs& a) {
  return self(rt)->submit(MixedKernels{}, a, true, false);
}
TaskOutputTensors op_alloc(PTO2Runtime* rt, const CoreTaskArgs& a) {
  return self(rt)->submit(MixedKernels{}, a, true, true);
}
void op_scope_begin(PTO2Runtime* rt, PTO2ScopeMode m) { self(rt)->scope_begin(m); }
void op_scope_end(PTO2Runtime* rt) { self(rt)->scope_end(); }
bool op_is_fatal(PTO2Runtime* rt) { return self(rt)->is_fatal(); }
void op_report_fatal(PTO2Runtime* rt, int32_t code, const char* msg) {
  self(rt)->report_fatal(code == 0 ? PTO2_ERROR_EXPLICIT_ORCH_FATAL : code,
                         std::string("rt_report_fatal: ") + (msg ? msg : ""));
}
void op_log(PTO2Runtime*, PTO2LogLevel level, const char* func, const char* msg) {
  log::Level l = level == PTO2LogLevel::DEBUG  ? log::Level::kDebug
                 : level == PTO2LogLevel::INFO ? log::Level::kInfo
                 : level == PTO2LogLevel::WARN ? log::Level::kWarn
                                               : log::Level::kError;
  log::logf(l, func, "%s", msg);
}
bool op_get(PTO2Runtime* rt, const ChipTensor& t, uint32_t nd, const uint32_t* idx, void* out, uint32_t bytes) {
  return self(rt)->tensor_access(t, nd, idx, out, bytes, false);
}
bool op_set(PTO2Runtime* rt, const ChipTensor& t, uint32_t nd, const uint32_t* idx, const void* in, uint32_t bytes) {
  return self(rt)->tensor_access(t, nd, idx, const_cast<void*>(in), bytes, true);
}
int32_t op_clusters(PTO2Runtime* rt) { return self(rt)->cluster_count(); }
int32_t op_aivs(PTO2Runtime* rt) { return self(rt)->aiv_count(); }

void* op_host_view(PTO2Runtime* rt, uint64_t addr) {
  return exec::orchestration_host_view(self(rt)->device(), addr);
}
uint64_t op_device_address(PTO2Runtime* rt, const void* p) {
  return exec::orchestration_device_address(self(rt)->device(), p);
}

const PTO2RuntimeOps kOps = {PTO2_RUNTIME_OPS_ABI_VERSION,
                             op_submit,
                             op_dummy,
                             op_alloc,
                             op_scope_begin,
                             op_scope_end,
                             op_is_fatal,
                             op_report_fatal,
                             op_log,
                             op_get,
                             op_set,
                             op_clusters,
                             op_aivs,
                             nullptr,
                             op_host_view,
                             op_device_address,
                             {}};

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

TaskShape shape_of(const MixedKernels& k, uint8_t* mask) {
  *mask = 0;
  if (k.aic_kernel_id != INVALID_KERNEL_ID) *mask |= 1;
  if (k.aiv0_kernel_id != INVALID_KERNEL_ID) *mask |= 2;
  if (k.aiv1_kernel_id != INVALID_KERNEL_ID) *mask |= 4;
  int bits = __builtin_popcount(*mask);
  if (bits == 0) return TaskShape::kDummy;
  if (bits >= 2) return TaskShape::kMix;
  return (*mask & 1) ? TaskShape::kAic : TaskShape::kAiv;
}

std::string task_name(PTO2TaskId id) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "task %u:%u", id.ring(), id.local());
  return buf;
}

std::string kernels_name(const int32_t k[3]) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "kernels{aic=%d aiv0=%d aiv1=%d}", k[0], k[1], k[2]);
  return buf;
}


}  // namespace

// ---------------------------------------------------------------- lifecycle

TmrRuntime::TmrRuntime(const TmrConfig& config) : config_(config) {}

Expected<std::unique_ptr<TmrRuntime>> TmrRuntime::create(const TmrConfig& config) {
  if (config.device == nullptr) return invalid_argument("TmrRuntime: no device");
  std::unique_ptr<TmrRuntime> rt(new TmrRuntime(config));
  TASKRING_RETURN_IF_ERROR(rt->init());
  return rt;
}

Status TmrRuntime::init() {
  topo_ = config_.device->topology();
  executors_ = std::max(1, std::min(config_.executors, topo_.clusters));
  api_.rt.ops = &kOps;
  api_.owner = this;

  // Slot storage is reserved, not committed: only slots a run touches cost
  // memory, so the upstream default window (16384 per ring) is cheap.
  uint64_t total_slots = 0, total_nodes = 0;
  for (int r = 0; r < kRingLevels; ++r) {
    total_slots += config_.rings.task_window[r];
    total_nodes += config_.rings.dep_pool[r];
  }
  slot_memory_bytes_ = total_slots * sizeof(TaskSlot);
  slot_memory_ = mmap(nullptr, slot_memory_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                      -1, 0);
  if (slot_memory_ == MAP_FAILED) {
    slot_memory_ = nullptr;
    return unavailable("TmrRuntime: cannot reserve " + std::to_string(slot_memory_bytes_) + " bytes of task slots");
  }
  dep_memory_ = std::make_unique<DepNode[]>(total_nodes);
  TaskSlot* slots = static_cast<TaskSlot*>(slot_memory_);
  DepNode* nodes = dep_memory_.get();
  for (int r = 0; r < kRingLevels; ++r) {
    TaskRing& ring = rings_[r];
    ring.index = r;
    ring.window = config_.rings.task_window[r];
    ring.slots = slots;
    slots += ring.window;
    ring.dep_nodes = nodes;
    ring.dep_pool.size = config_.rings.dep_pool[r];
    nodes += ring.dep_pool.size;
    ring.heap.size = config_.rings.heap[r];
    auto heap = config_.device->malloc(ring.heap.size, 1024, "tmr heap ring " + std::to_string(r));
    if (!heap.ok()) return heap.status().with_context("TmrRuntime: heap ring " + std::to_string(r) + " (PTO2_RING_HEAP)");
    ring.heap_base = *heap;
  }
  for (auto& q : queues_) q.init(total_slots + 16);

  orchestrator_ = std::thread([this] { orchestrator_main(); });
  for (int e = 0; e < executors_; ++e) executor_threads_.emplace_back([this, e] { executor_main(e); });
  return Status::Ok();
}

TmrRuntime::~TmrRuntime() {
  // A run still in flight is given a bounded time, then abandoned as fatal so
  // that the threads can be joined.
  if (!run_finished()) {
    (void)wait_run(Deadline::after_ms(config_.stall_timeout_ms));
    report_fatal(PTO2_ERROR_SCHEDULER_TIMEOUT, "runtime destroyed while a run was in flight");
  }
  shutdown_.store(true, std::memory_order_seq_cst);
  orch_start_.notify_all();
  work_.notify_all();
  ring_progress_.notify_all();
  if (orchestrator_.joinable()) orchestrator_.join();
  for (auto& t : executor_threads_) t.join();
  for (auto& ring : rings_) {
    if (ring.heap_base != 0) (void)config_.device->free(ring.heap_base);
  }
  if (slot_memory_ != nullptr) munmap(slot_memory_, slot_memory_bytes_);
}

// ---------------------------------------------------------------- run control

Status TmrRuntime::start_run(OrchestrationEntryFn entry, BindRuntimeFn bind, const ChipTaskArgs* args,
                             const taskring_kernel_fn* kernels, uint64_t /*invocation_id*/) {
  if (!run_finished()) return failed_precondition("TmrRuntime: a run is already in flight");
  if (entry == nullptr) return invalid_argument("TmrRuntime: null orchestration entry");
  entry_ = entry;
  bind_ = bind;
  args_ = args;
  kernels_ = kernels;
  for (auto& ring : rings_) ring.reset_counters();
  tensor_map_.reset();
  scopes_.clear();
  scope_tasks_.clear();
  submitted_ = 0;
  stats_ = RunStats();
  submitted_pub_.store(0, std::memory_order_relaxed);
  completed_.store(0, std::memory_order_relaxed);
  fatal_code_.store(0, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(fatal_mu_);
    fatal_message_.clear();
  }
  sched_first_ns_.store(0, std::memory_order_relaxed);
  sched_last_ns_.store(0, std::memory_order_relaxed);
  kernel_calls_.store(0, std::memory_order_relaxed);
  last_progress_ns_.store(mono_ns(), std::memory_order_relaxed);
  orch_done_.store(false, std::memory_order_relaxed);
  run_finished_.store(false, std::memory_order_relaxed);
  run_active_.store(true, std::memory_order_seq_cst);
  run_generation_.fetch_add(1, std::memory_order_seq_cst);
  orch_start_.notify_all();
  work_.notify_all();
  return Status::Ok();
}

Status TmrRuntime::wait_run(Deadline deadline) {
  return done_.wait([this] { return run_finished(); }, deadline, "the L2 run to finish");
}

Status TmrRuntime::run_status() const {
  int32_t code = fatal_code_.load(std::memory_order_acquire);
  if (code == 0) return Status::Ok();
  std::lock_guard<std::mutex> lock(fatal_mu_);
  return Status(pto2_error_status_code(code), std::string(pto2_error_name(code)) + ": " + fatal_message_);
}

RunStats TmrRuntime::stats() const {
  RunStats s = stats_;
  s.tasks_completed = completed_.load(std::memory_order_acquire);
  s.kernel_calls = kernel_calls_.load(std::memory_order_acquire);
  s.sched_start_ns = sched_first_ns_.load(std::memory_order_acquire);
  s.sched_end_ns = sched_last_ns_.load(std::memory_order_acquire);
  return s;
}

void TmrRuntime::report_fatal(int32_t code, const std::string& message) {
  int32_t expected = 0;
  {
    std::lock_guard<std::mutex> lock(fatal_mu_);
    if (fatal_code_.compare_exchange_strong(expected, code, std::memory_order_acq_rel)) fatal_message_ = message;
  }
  work_.notify_all();
  ring_progress_.notify_all();
}

void TmrRuntime::orchestrator_main() {
  uint64_t seen_generation = 0;
  while (true) {
    uint64_t gen = 0;
    while (true) {
      if (shutdown_.load(std::memory_order_acquire)) return;
      gen = run_generation_.load(std::memory_order_acquire);
      if (gen != seen_generation) break;
      uint32_t epoch = orch_start_.begin_park();
      if (shutdown_.load(std::memory_order_acquire) || run_generation_.load(std::memory_order_acquire) != seen_generation) {
        orch_start_.cancel_park();
        continue;
      }
      orch_start_.finish_park(epoch, 50'000'000);
    }
    seen_generation = gen;
    stats_.orch_start_ns = mono_ns();
    if (bind_ != nullptr) bind_(api());
    scope_begin(PTO2ScopeMode::AUTO);  // the implicit outer scope (ring 0)
    entry_(*args_);
    // Close scopes the entry left open (a missing rt_scope_end), then the
    // outer one.
    while (!scopes_.empty()) scope_end();
    if (bind_ != nullptr) bind_(nullptr);
    finish_orchestration();
  }
}

void TmrRuntime::finish_orchestration() {
  stats_.orch_end_ns = mono_ns();
  stats_.tasks_submitted = submitted_;
  submitted_pub_.store(submitted_, std::memory_order_seq_cst);
  orch_done_.store(true, std::memory_order_seq_cst);
  work_.notify_all();
  maybe_finish_run();
}

void TmrRuntime::maybe_finish_run() {
  if (!orch_done_.load(std::memory_order_acquire)) return;
  if (completed_.load(std::memory_order_acquire) != submitted_pub_.load(std::memory_order_acquire)) return;
  bool expected = true;
  if (!run_active_.compare_exchange_strong(expected, false, std::memory_order_acq_rel)) return;
  if (sched_last_ns_.load(std::memory_order_relaxed) == 0) sched_last_ns_.store(mono_ns(), std::memory_order_relaxed);
  run_finished_.store(true, std::memory_order_seq_cst);
  done_.notify_all();
}

// ---------------------------------------------------------------- scopes

void TmrRuntime::scope_begin(PTO2ScopeMode mode) {
  if (scopes_.size() >= static_cast<size_t>(PTO2_MAX_SCOPE_DEPTH)) {
    report_fatal(PTO2_ERROR_INVALID_ARGS, "scope_begin: more than " + std::to_string(PTO2_MAX_SCOPE_DEPTH) +
                                              " nested scopes (PTO2_MAX_SCOPE_DEPTH)");
    scopes_.push_back(Scope{mode, scope_tasks_.size()});  // keep begin/end balanced
    return;
  }
  if (mode == PTO2ScopeMode::AUTO && !scopes_.empty() && scopes_.back().mode == PTO2ScopeMode::MANUAL) {
    report_fatal(PTO2_ERROR_INVALID_ARGS, "scope_begin: an AUTO scope inside a MANUAL scope is not allowed");
  }
  // A scope inside a MANUAL scope stays manual.
  if (!scopes_.empty() && scopes_.back().mode == PTO2ScopeMode::MANUAL) mode = PTO2ScopeMode::MANUAL;
  scopes_.push_back(Scope{mode, scope_tasks_.size()});
}

void TmrRuntime::scope_end() {
  if (scopes_.empty()) {
    report_fatal(PTO2_ERROR_INVALID_ARGS, "scope_end: no open scope");
    return;
  }
  Scope s = scopes_.back();
  scopes_.pop_back();
  for (size_t i = s.first_task; i < scope_tasks_.size(); ++i) {
    TaskSlot* t = scope_tasks_[i];
    rings_[t->ring].pinned_by_open_scopes--;
    release(t);
  }
  scope_tasks_.resize(s.first_task);
}

// ---------------------------------------------------------------- submit

void TmrRuntime::fail_args(const char* what, const std::string& detail) {
  report_fatal(PTO2_ERROR_INVALID_ARGS, std::string(what) + ": " + detail);
}

TaskSlot* TmrRuntime::slot_of(PTO2TaskId id) {
  if (!id.is_valid() || id.ring() >= static_cast<uint32_t>(kRingLevels)) return nullptr;
  TaskRing& ring = rings_[id.ring()];
  TaskSlot& s = ring.slots[id.local() & (ring.window - 1)];
  // Only the orchestrator reuses slots, so on this thread an id match means
  // the task still owns its slot.
  return s.id == id ? &s : nullptr;
}

void TmrRuntime::add_producer(Producer* list, int* n, TaskSlot* slot, PTO2TaskId id, uint8_t flags) {
  for (int i = 0; i < *n; ++i) {
    if (list[i].slot == slot) {
      list[i].flags |= flags;
      return;
    }
  }
  if (*n >= kMaxRetainedProducers) {
    // More distinct producers than a task can track: serialise through the
    // conservative path would drop edges, so it is a fatal error instead.
    report_fatal(PTO2_ERROR_INVALID_ARGS, "submit: more than " + std::to_string(kMaxRetainedProducers) +
                                              " distinct producer tasks for one task");
    return;
  }
  list[(*n)++] = Producer{slot, id, flags};
}

std::string TmrRuntime::stall_diagnostics(TaskRing& ring) {
  uint64_t alive = ring.last_alive.load(std::memory_order_acquire);
  if (alive >= ring.next_seq) return "; ring empty";
  TaskSlot& s = ring.slot(alive);
  return "; oldest live " + task_name(s.id) + ": fanin_pending=" +
         std::to_string(s.fanin_pending.load(std::memory_order_acquire)) +
         " release_pending=" + std::to_string(s.release_pending.load(std::memory_order_acquire)) +
         " completed=" + std::to_string(s.completed_flag.load(std::memory_order_acquire)) +
         " consumed=" + std::to_string(s.consumed.load(std::memory_order_acquire)) +
         " live=" + std::to_string(ring.next_seq - alive) + " pinned_by_open_scopes=" +
         std::to_string(ring.pinned_by_open_scopes);
}

bool TmrRuntime::wait_for_ring(TaskRing& ring, uint64_t observed_alive, const char* what, const std::string& knob) {
  // Returns as soon as the ring moved past what the caller saw when it found
  // no room (a retirement in between must not be waited for again).
  // Structural deadlocks are detected by the caller before it waits; this
  // is the wall-clock backstop for everything else.
  uint64_t alive = observed_alive;
  ++stats_.orch_blocked;
  uint64_t start = mono_ns();
  uint64_t last_alive = alive;
  uint64_t last_move = start;
  while (true) {
    if (is_fatal()) return false;
    uint32_t epoch = ring_progress_.begin_park();
    uint64_t now_alive = ring.last_alive.load(std::memory_order_acquire);
    if (now_alive != last_alive) {
      ring_progress_.cancel_park();
      return true;
    }
    uint64_t now = mono_ns();
    if (now - last_move > config_.stall_timeout_ms * 1000000ull) {
      ring_progress_.cancel_park();
      report_fatal(PTO2_ERROR_FLOW_CONTROL_DEADLOCK,
                   std::string("ring ") + std::to_string(ring.index) + " " + what + ": no task retired for " +
                       std::to_string(config_.stall_timeout_ms) + " ms (window=" + std::to_string(ring.window) +
                       " heap=" + std::to_string(ring.heap.size) + " dep_pool=" + std::to_string(ring.dep_pool.size) +
                       "); raise " + knob + " or TASKRING_STALL_TIMEOUT_MS" + stall_diagnostics(ring));
      return false;
    }
    ring_progress_.finish_park(epoch, 1'000'000);
  }
}

bool TmrRuntime::allocate(TaskRing& ring, uint64_t heap_bytes, uint64_t dep_nodes, uint64_t* heap_off,
                          uint64_t* pool_off, TaskSlot** out) {
  if (heap_bytes > ring.heap.size) {
    // Upstream reports this as a heap-ring deadlock (2): the request can
    // never fit, so the ring can never make room for it.
    report_fatal(PTO2_ERROR_HEAP_RING_DEADLOCK,
                 "ring " + std::to_string(ring.index) + ": one task needs " + std::to_string(heap_bytes) +
                     " heap bytes but the heap ring holds " + std::to_string(ring.heap.size) + "; raise PTO2_RING_HEAP");
    return false;
  }
  if (dep_nodes > ring.dep_pool.size) {
    report_fatal(PTO2_ERROR_DEP_POOL_OVERFLOW,
                 "ring " + std::to_string(ring.index) + ": one task needs " + std::to_string(dep_nodes) +
                     " dependency entries but the pool holds " + std::to_string(ring.dep_pool.size) +
                     "; raise PTO2_RING_DEP_POOL");
    return false;
  }
  // Every task of an open scope stays live until the scope ends: a scope
  // with a full window of tasks can never make room for another.
  if (ring.pinned_by_open_scopes >= ring.window) {
    // Upstream's distinction: the innermost scope alone filling the window is
    // a scope deadlock (1); nested scopes that share the last ring filling it
    // together is a flow-control deadlock (3).
    const size_t own = scopes_.empty() ? 0 : scope_tasks_.size() - scopes_.back().first_task;
    report_fatal(own >= ring.window ? PTO2_ERROR_SCOPE_DEADLOCK : PTO2_ERROR_FLOW_CONTROL_DEADLOCK,
                 "ring " + std::to_string(ring.index) + ": open scopes hold " +
                     std::to_string(ring.pinned_by_open_scopes) + " live tasks and the task window is " +
                     std::to_string(ring.window) + "; raise PTO2_RING_TASK_WINDOW or split the scope");
    return false;
  }
  // Each wait below snapshots last_alive *before* testing for room: the
  // structural checks then reason about a consistent set of live tasks, and
  // the wait returns at once if a task retired after the snapshot.
  for (uint64_t alive = ring.last_alive.load(std::memory_order_acquire); ring.next_seq - alive >= ring.window;
       alive = ring.last_alive.load(std::memory_order_acquire)) {
    if (!wait_for_ring(ring, alive, "task window full", "PTO2_RING_TASK_WINDOW")) return false;
  }
  uint64_t saved_heap_top = ring.heap.top;
  while (true) {
    uint64_t alive = ring.last_alive.load(std::memory_order_acquire);
    if (ring.heap.try_alloc(heap_bytes, heap_off)) break;
    // Structural: every live task is pinned by an open scope, so the heap can
    // only be reclaimed after this (blocked) thread closes one.
    uint64_t live = ring.next_seq - alive;
    if (live > 0 && live <= ring.pinned_by_open_scopes) {
      TaskSlot& oldest = ring.slot(alive);
      report_fatal(PTO2_ERROR_HEAP_RING_DEADLOCK,
                   "ring " + std::to_string(ring.index) + ": heap full (" + std::to_string(ring.heap.size) +
                       " bytes, request " + std::to_string(heap_bytes) + ") and the oldest live " +
                       task_name(oldest.id) + " is pinned by an open scope; raise PTO2_RING_HEAP or close the scope");
      return false;
    }
    if (!wait_for_ring(ring, alive, "heap full", "PTO2_RING_HEAP")) return false;
  }
  while (true) {
    uint64_t alive = ring.last_alive.load(std::memory_order_acquire);
    if (ring.dep_pool.try_alloc(dep_nodes, pool_off)) break;
    uint64_t live = ring.next_seq - alive;
    if (live > 0 && live <= ring.pinned_by_open_scopes) {
      ring.heap.top = saved_heap_top;
      report_fatal(PTO2_ERROR_DEP_POOL_OVERFLOW,
                   "ring " + std::to_string(ring.index) + ": dependency pool full (" +
                       std::to_string(ring.dep_pool.size) + " entries) and every live task is pinned by an open "
                       "scope; raise PTO2_RING_DEP_POOL");
      return false;
    }
    if (!wait_for_ring(ring, alive, "dependency pool full", "PTO2_RING_DEP_POOL")) {
      ring.heap.top = saved_heap_top;
      return false;
    }
  }
  uint64_t seq = ring.next_seq++;
  TaskSlot* t = &ring.slot(seq);
  t->seq = seq;
  t->id = PTO2TaskId::make(static_cast<uint32_t>(ring.index), static_cast<uint32_t>(seq));
  t->ring = static_cast<uint8_t>(ring.index);
  t->heap_end = ring.heap.top;
  t->dep_mark = ring.dep_pool.top;
  t->completed = false;
  t->completed_flag.store(false, std::memory_order_relaxed);
  t->consumed.store(false, std::memory_order_relaxed);
  t->fanout_head = nullptr;
  t->retained_count = 0;
  t->next_block.store(0, std::memory_order_relaxed);
  t->blocks_done.store(0, std::memory_order_relaxed);
  // Guard + scope reference + own completion.
  t->fanin_pending.store(1, std::memory_order_relaxed);
  t->release_pending.store(2, std::memory_order_relaxed);
  ring.published_seq.store(ring.next_seq, std::memory_order_release);
  *out = t;
  return true;
}

TaskOutputTensors TmrRuntime::submit(const MixedKernels& kernels, const CoreTaskArgs& args, bool dummy,
                                     bool alloc_only) {
  TaskOutputTensors result;
  if (is_fatal()) return result;
  const char* op = alloc_only ? "alloc_tensors" : dummy ? "rt_submit_dummy_task" : "rt_submit_task";
  if (scopes_.empty()) {
    fail_args(op, "called outside any scope");
    return result;
  }
  if (args.has_error()) {
    fail_args(op, args.error_msg());
    return result;
  }
  uint8_t mask = 0;
  TaskShape shape = dummy ? TaskShape::kDummy : shape_of(kernels, &mask);
  if (!dummy && shape == TaskShape::kDummy) {
    fail_args(op, "no active kernel slot (use rt_submit_dummy_task for a kernel-less task)");
    return result;
  }
  if (!dummy) {
    const int32_t ids[3] = {kernels.aic_kernel_id, kernels.aiv0_kernel_id, kernels.aiv1_kernel_id};
    for (int i = 0; i < 3; ++i) {
      if (ids[i] == INVALID_KERNEL_ID) continue;
      if (ids[i] < 0 || ids[i] >= TASKRING_MAX_FUNC_ID || kernels_[ids[i]] == nullptr) {
        report_fatal(PTO2_ERROR_UNKNOWN_KERNEL, std::string(op) + ": kernel id " + std::to_string(ids[i]) +
                                                    " is not registered with this callable");
        return result;
      }
    }
  }
  int16_t block_num = args.launch_spec.blocks();
  if (block_num < 1) {
    fail_args(op, "launch_spec.block_num " + std::to_string(block_num) + " must be >= 1");
    return result;
  }
  if (std::string why = exec::sync_start_violation(op, shape, block_num, args.launch_spec.require_sync_start(), topo_);
      !dummy && !why.empty()) {
    report_fatal(PTO2_ERROR_REQUIRE_SYNC_START_INVALID, why);
    return result;
  }
  exec::ResolvedPredicate predicate;
  if (Status ps = exec::resolve_predicate(args.predicate(), *config_.device, &predicate); !ps.ok()) {
    fail_args(op, ps.message());
    return result;
  }
  const int nt = args.tensor_count();
  uint64_t heap_bytes = 0;
  for (int i = 0; i < nt; ++i) {
    TensorArgType tag = args.tag(i);
    if (alloc_only && tag != TensorArgType::OUTPUT) {
      fail_args(op, "argument " + std::to_string(i) + " is " + std::string(tensor_arg_type_name(tag)) +
                        "; alloc_tensors takes only OUTPUT (TensorCreateInfo) arguments");
      return result;
    }
    if (tag == TensorArgType::OUTPUT) {
      Status s = args.create_info(i)->validate();
      if (!s.ok()) {
        fail_args(op, "argument " + std::to_string(i) + " (OUTPUT): " + s.message());
        return result;
      }
      heap_bytes += round_up(std::max<uint64_t>(args.create_info(i)->nbytes(), 1), kHeapAlign);
    } else {
      Status s = args.tensor(i)->validate();
      if (!s.ok()) {
        fail_args(op, "argument " + std::to_string(i) + " (" + std::string(tensor_arg_type_name(tag)) +
                          "): " + s.message());
        return result;
      }
      // The address decides, not the tag: an orchestration that re-wraps
      // entry data with make_tensor_external gets the default (HOST) tag.
      if (!config_.device->is_device_address(args.tensor(i)->buffer.addr)) {
        fail_args(op, "argument " + std::to_string(i) + " (" + std::string(tensor_arg_type_name(tag)) +
                          ") is not a device tensor (" + args.tensor(i)->describe() +
                          "); pass tensors from the entry arguments or task outputs");
        return result;
      }
    }
  }
  const bool manual_scope = scopes_.back().mode == PTO2ScopeMode::MANUAL;

  // Collect producers before allocating so the dependency-pool reservation
  // is exact. Slot lookups only need the ids; nothing is pinned yet.
  Producer producers[kMaxRetainedProducers];
  int np = 0;
  for (int i = 0; i < args.dependency_count(); ++i) {
    PTO2TaskId id = args.dependency_ids()[i];
    uint8_t flags = args.dependency_flags() ? args.dependency_flags()[i] : (DEP_WAIT | DEP_RETAIN);
    TaskSlot* p = slot_of(id);
    if (p != nullptr) add_producer(producers, &np, p, id, flags);  // retired producers are satisfied
  }
  for (int i = 0; i < nt && !manual_scope; ++i) {
    TensorArgType tag = args.tag(i);
    if (tag == TensorArgType::OUTPUT) continue;
    const ChipTensor& t = *args.tensor(i);
    if (TaskSlot* p = slot_of(t.owner_task_id)) add_producer(producers, &np, p, t.owner_task_id, DEP_WAIT | DEP_RETAIN);
    if (t.manual_dep || tag == TensorArgType::NO_DEP) continue;
    bool writer = tag == TensorArgType::INOUT || tag == TensorArgType::OUTPUT_EXISTING;
    tensor_map_.for_each_dependency(t, writer, [&](TaskSlot* p) { add_producer(producers, &np, p, p->id, DEP_WAIT); });
  }
  if (is_fatal()) return result;

  uint32_t ring_index = static_cast<uint32_t>(std::min<size_t>(scopes_.size() - 1, kRingLevels - 1));
  TaskRing& ring = rings_[ring_index];
  uint64_t heap_off = 0, pool_off = 0;
  TaskSlot* t = nullptr;
  if (!allocate(ring, heap_bytes, static_cast<uint64_t>(np), &heap_off, &pool_off, &t)) return result;
  ++submitted_;
  if (alloc_only) ++stats_.alloc_tasks;
  else if (dummy) ++stats_.dummy_tasks;
  else ++stats_.kernel_tasks;
  stats_.heap_bytes += heap_bytes;

  t->shape = shape;
  t->block_num = dummy ? 1 : block_num;
  t->predicate = predicate;
  t->kernels[0] = kernels.aic_kernel_id;
  t->kernels[1] = kernels.aiv0_kernel_id;
  t->kernels[2] = kernels.aiv1_kernel_id;
  t->tensor_count = nt;
  t->scalar_count = args.scalar_count();
  std::memcpy(t->scalars, args.scalars(), sizeof(uint64_t) * static_cast<size_t>(args.scalar_count()));

  // Materialise tensors: copies of the inputs, fresh heap tensors for OUTPUTs.
  uint64_t out_off = heap_off;
  for (int i = 0; i < nt; ++i) {
    if (args.tag(i) != TensorArgType::OUTPUT) {
      t->tensors[i] = *args.tensor(i);
      continue;
    }
    const TensorCreateInfo& ci = *args.create_info(i);
    uint64_t bytes = ci.nbytes();
    auto made = try_make_tensor(ring.heap_base + out_off, bytes, std::span<const uint32_t>(ci.shapes, ci.ndims),
                                ci.dtype, ci.manual_dep, 0, AddressSpace::DEVICE);
    ChipTensor& dst = t->tensors[i];
    dst = *made;
    dst.owner_task_id = t->id;
    if (ci.has_initial_value && bytes > 0) {
      uint8_t* p = static_cast<uint8_t*>(config_.device->device_view_unchecked(dst.buffer.addr));
      size_t es = element_size(ci.dtype);
      for (uint64_t b = 0; b < bytes; b += es) std::memcpy(p + b, &ci.initial_value_bits, es);
    }
    out_off += round_up(std::max<uint64_t>(bytes, 1), kHeapAlign);
    if (result.count < CORE_MAX_TENSOR_ARGS) result.outputs[result.count++] = &dst;
  }
  result.set_task_id(t->id);

  // TensorMap: writers for INOUT / OUTPUT_EXISTING, readers for INPUT.
  if (!manual_scope) {
    for (int i = 0; i < nt; ++i) {
      TensorArgType tag = args.tag(i);
      if (tag == TensorArgType::OUTPUT || tag == TensorArgType::NO_DEP || t->tensors[i].manual_dep) continue;
      tensor_map_.insert(t->tensors[i], t, tag != TensorArgType::INPUT);
    }
  }

  // Wire: register on each unfinished producer's fanout list; pin retained
  // producers so their outputs outlive this task.
  DepNode* nodes = ring.dep_nodes + pool_off;
  int used_nodes = 0;
  for (int i = 0; i < np; ++i) {
    TaskSlot* p = producers[i].slot;
    p->fanout_lock.lock();
    if (p->id == producers[i].id) {
      if ((producers[i].flags & DEP_WAIT) && !p->completed) {
        t->fanin_pending.fetch_add(1, std::memory_order_relaxed);
        DepNode* n = &nodes[used_nodes++];
        n->consumer = t;
        n->next = p->fanout_head;
        p->fanout_head = n;
      }
      if (producers[i].flags & DEP_RETAIN) {
        int32_t r = p->release_pending.load(std::memory_order_acquire);
        while (r > 0 && !p->release_pending.compare_exchange_weak(r, r + 1, std::memory_order_acq_rel)) {
        }
        if (r > 0) t->retained[t->retained_count++] = p;
      }
    }
    p->fanout_lock.unlock();
  }
  scope_tasks_.push_back(t);
  ring.pinned_by_open_scopes++;

  if (alloc_only) {
    // Completes at once: no kernel, and its outputs live until its scope
    // and retaining consumers let go.
    TaskSlot* none = nullptr;
    if (t->fanin_pending.fetch_sub(1, std::memory_order_acq_rel) == 1) complete(t, &none);
    if (none != nullptr) push_ready(none);
    return result;
  }
  if (t->fanin_pending.fetch_sub(1, std::memory_order_acq_rel) == 1) push_ready(t);
  return result;
}

void TmrRuntime::push_ready(TaskSlot* t) {
  queues_[static_cast<int>(t->shape)].push(t);
  work_.notify_all();
}

// ---------------------------------------------------------------- tensor data

bool TmrRuntime::tensor_access(const ChipTensor& t, uint32_t ndims, const uint32_t* idx, void* data, uint32_t bytes,
                               bool write) {
  const char* op = write ? "set_tensor_data" : "get_tensor_data";
  Status s = t.validate();
  if (!s.ok() || ndims != t.ndims || idx == nullptr || bytes != t.elem_size()) {
    fail_args(op, !s.ok() ? s.message()
                          : "index rank " + std::to_string(ndims) + " or element size " + std::to_string(bytes) +
                                " does not match " + t.describe());
    return false;
  }
  for (uint32_t i = 0; i < ndims; ++i) {
    if (idx[i] >= t.shapes[i]) {
      fail_args(op, "index " + std::to_string(idx[i]) + " of dim " + std::to_string(i) + " outside " + t.describe());
      return false;
    }
  }
  // The element as a 1-element view: wait for its creator and every earlier
  // writer (and, to write, every earlier reader) that overlaps it.
  ChipTensor elem = t;
  uint64_t off = t.element_offset(std::span<const uint32_t>(idx, ndims));
  elem.start_offset = off;
  for (uint32_t i = 0; i < ndims; ++i) elem.shapes[i] = 1;
  elem.refresh_derived();
  std::vector<TaskSlot*> waits;
  if (TaskSlot* p = slot_of(t.owner_task_id)) waits.push_back(p);
  if (!t.manual_dep) {
    // A read removes nothing; a write probe would drop covered entries, so
    // collect via a reader probe plus an explicit reader scan when writing.
    tensor_map_.for_each_dependency(elem, false, [&](TaskSlot* p) { waits.push_back(p); });
    if (write) {
      // Tasks submitted later must still order after this write: register it
      // as if a writer task covering the element had run, by waiting for all
      // readers too.
      tensor_map_.for_each_dependency(elem, true, [&](TaskSlot* p) { waits.push_back(p); });
    }
  }
  Deadline deadline = Deadline::after_ms(config_.tensor_wait_timeout_ms);
  for (TaskSlot* p : waits) {
    PTO2TaskId id = p->id;
    Status w = ring_progress_.wait(
        [&] { return is_fatal() || p->id != id || p->completed_flag.load(std::memory_order_acquire); }, deadline,
        op);
    if (is_fatal()) return false;
    if (!w.ok()) {
      report_fatal(PTO2_ERROR_TENSOR_WAIT_TIMEOUT, std::string(op) + ": " + task_name(id) +
                                                       " did not complete within " +
                                                       std::to_string(config_.tensor_wait_timeout_ms) + " ms");
      return false;
    }
  }
  void* p = config_.device->device_view_unchecked(t.buffer.addr + off * t.elem_size());
  if (write) std::memcpy(p, data, bytes);
  else std::memcpy(data, p, bytes);
  return true;
}

// ---------------------------------------------------------------- executors

TaskSlot* TmrRuntime::pop_ready() {
  static constexpr int kOrder[kNumShapes] = {static_cast<int>(TaskShape::kDummy), static_cast<int>(TaskShape::kMix),
                                             static_cast<int>(TaskShape::kAic), static_cast<int>(TaskShape::kAiv)};
  for (int q : kOrder) {
    if (TaskSlot* t = queues_[q].pop()) return t;
  }
  return nullptr;
}

// Idle polls before an executor parks (~100 µs with yields on the build
// machines).
constexpr uint32_t kIdleSpins = 4096;

void TmrRuntime::executor_main(int index) {
  uint64_t seen_generation = 0;
  while (!shutdown_.load(std::memory_order_acquire)) {
    // Park between runs.
    uint64_t gen = run_generation_.load(std::memory_order_acquire);
    if (gen == seen_generation || !run_active_.load(std::memory_order_acquire)) {
      uint32_t epoch = work_.begin_park();
      if (shutdown_.load(std::memory_order_acquire) ||
          (run_generation_.load(std::memory_order_acquire) != seen_generation &&
           run_active_.load(std::memory_order_acquire))) {
        work_.cancel_park();
        continue;
      }
      work_.finish_park(epoch, 50'000'000);
      continue;
    }
    seen_generation = gen;
    TaskSlot* next = nullptr;
    uint32_t idle_spins = 0;
    while (run_active_.load(std::memory_order_acquire)) {
      TaskSlot* t = next != nullptr ? next : pop_ready();
      next = nullptr;
      if (t != nullptr) {
        idle_spins = 0;
        execute(t, index, &next);
        continue;
      }
      maybe_finish_run();
      // Stay hot for a while (yielding, so a runnable orchestrator on the
      // same hardware thread is not starved): a futex wake costs more than
      // the tasks it would deliver.
      if (++idle_spins < kIdleSpins) {
        if ((idle_spins & 31) == 0) sched_yield();
        else Waiter::cpu_relax();
        continue;
      }
      uint32_t epoch = work_.begin_park();
      if (!run_active_.load(std::memory_order_acquire) || !queues_[0].empty_hint() || !queues_[1].empty_hint() ||
          !queues_[2].empty_hint() || !queues_[3].empty_hint()) {
        work_.cancel_park();
        continue;
      }
      work_.finish_park(epoch, 2'000'000);
    }
  }
}

void TmrRuntime::execute(TaskSlot* t, int executor, TaskSlot** next_local) {
  if (sched_first_ns_.load(std::memory_order_relaxed) == 0) {
    uint64_t zero = 0;
    sched_first_ns_.compare_exchange_strong(zero, mono_ns(), std::memory_order_relaxed);
  }
  if (t->shape == TaskShape::kDummy) {
    complete(t, next_local);
    return;
  }
  // SPMD: claim one block; if more remain, leave the task queued so other
  // executors take blocks in parallel.
  // Read block_num before finishing a block: once another executor finishes
  // the last one, the slot may retire and be reused.
  const int32_t nblocks = t->block_num;
  int32_t block = t->next_block.fetch_add(1, std::memory_order_acq_rel);
  if (block >= nblocks) return;
  // The claimer of block 0 evaluates the predicate before any other block is
  // offered: a false predicate retires the task without running it.
  if (block == 0 && !exec::predicate_allows_run(t->predicate, *config_.device)) {
    complete(t, next_local);
    return;
  }
  if (block + 1 < nblocks) push_ready(t);
  if (!is_fatal()) run_block(t, block, executor);
  if (t->blocks_done.fetch_add(1, std::memory_order_acq_rel) + 1 == nblocks) complete(t, next_local);
}

bool TmrRuntime::run_block(TaskSlot* t, int block, int executor) {
  exec::LaunchTask task{t->tensors, t->tensor_count, t->scalars, t->scalar_count, t->kernels, t->block_num};
  exec::LaunchFailure f;
  if (exec::launch_block(task, block, exec::LaunchPlace{executor, executors_, topo_}, *config_.device, kernels_,
                         kernel_calls_, &f)) {
    return true;
  }
  report_fatal(PTO2_ERROR_KERNEL_FAILED, task_name(t->id) + " kernel " + std::to_string(f.func_id) + " (" +
                                             kernels_name(t->kernels) + ", block " + std::to_string(block) + "/" +
                                             std::to_string(t->block_num) + ", core " + std::to_string(f.core_id) +
                                             ") failed with code " + std::to_string(f.code) + ": " + f.message);
  return false;
}

void TmrRuntime::complete(TaskSlot* t, TaskSlot** next_local) {
  t->fanout_lock.lock();
  t->completed = true;
  DepNode* n = t->fanout_head;
  t->fanout_head = nullptr;
  t->fanout_lock.unlock();
  t->completed_flag.store(true, std::memory_order_release);
  while (n != nullptr) {
    DepNode* next = n->next;  // read before the consumer may run and retire
    TaskSlot* c = n->consumer;
    if (c->fanin_pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      if (*next_local == nullptr) *next_local = c;
      else push_ready(c);
    }
    n = next;
  }
  for (int i = 0; i < t->retained_count; ++i) release(t->retained[i]);
  release(t);
  sched_last_ns_.store(mono_ns(), std::memory_order_relaxed);
  if (completed_.fetch_add(1, std::memory_order_acq_rel) + 1 == submitted_pub_.load(std::memory_order_acquire)) {
    maybe_finish_run();
  }
}

void TmrRuntime::release(TaskSlot* t) {
  if (t->release_pending.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  t->consumed.store(true, std::memory_order_seq_cst);
  if (rings_[t->ring].advance()) ring_progress_.notify_all();
}

}  // namespace taskring::tmr
