#include "hbg_runtime.hpp"

#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "exec/address_map.hpp"
#include "graph/submission.hpp"
#include "taskring/base/clock.hpp"
#include "taskring/log/strace.hpp"

namespace taskring::hbg {

namespace {

HbgRuntime* self(PTO2Runtime* rt) { return reinterpret_cast<HbgRuntime::ApiHandle*>(rt)->owner; }

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
  char buf[1200];
  const char* name = level == PTO2LogLevel::DEBUG  ? "DEBUG"
                     : level == PTO2LogLevel::INFO ? "INFO"
                     : level == PTO2LogLevel::WARN ? "WARN"
                                                   : "ERROR";
  int n = std::snprintf(buf, sizeof(buf), "[mono_ns=%" PRIu64 "][T0x%lx][%s] %s: %s\n", mono_ns(),
                        static_cast<unsigned long>(pthread_self()), name, func, msg);
  if (n > 0) (void)!::write(2, buf, static_cast<size_t>(std::min<int>(n, sizeof(buf) - 1)));
}
bool op_get(PTO2Runtime* rt, const ChipTensor& t, uint32_t nd, const uint32_t* idx, void* out, uint32_t bytes) {
  return self(rt)->tensor_access(t, nd, idx, out, bytes, false);
}
bool op_set(PTO2Runtime* rt, const ChipTensor& t, uint32_t nd, const uint32_t* idx, const void* in, uint32_t bytes) {
  return self(rt)->tensor_access(t, nd, idx, const_cast<void*>(in), bytes, true);
}
int32_t op_clusters(PTO2Runtime* rt) { return self(rt)->cluster_count(); }
int32_t op_aivs(PTO2Runtime* rt) { return self(rt)->aiv_count(); }
GraphSubmitResult op_submit_graph(PTO2Runtime* rt, uint64_t key, const char* name, GraphInvokeFn invoke,
                                  const void* closure, const GraphTaskArgs& args) {
  return self(rt)->submit_graph(key, name, invoke, closure, args);
}

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
                             op_submit_graph,
                             op_host_view,
                             op_device_address,
                             {}};

}  // namespace

Status read_hbg_knobs(const EnvLookup& env, HbgConfig* config) {
  TASKRING_ASSIGN_OR_RETURN(auto arena, read_int_knob(env, "TASKRING_GRAPH_ARENA_BYTES", 0, int64_t{1} << 34));
  if (arena) config->graph_arena_bytes = static_cast<uint64_t>(*arena);
  return Status::Ok();
}

HbgRuntime::HbgRuntime(const HbgConfig& config) : config_(config) {}

Expected<std::unique_ptr<HbgRuntime>> HbgRuntime::create(const HbgConfig& config) {
  if (config.device == nullptr) return invalid_argument("HbgRuntime: no device");
  std::unique_ptr<HbgRuntime> rt(new HbgRuntime(config));
  TASKRING_RETURN_IF_ERROR(rt->init());
  return rt;
}

Status HbgRuntime::init() {
  topo_ = config_.device->topology();
  executors_ = std::max(1, std::min(config_.executors, topo_.clusters));
  api_.rt.ops = &kOps;
  api_.owner = this;
  for (int r = 0; r < kRingLevels; ++r) {
    task_limit_ += config_.rings.task_window[r];
    dep_limit_ += config_.rings.dep_pool[r];
    heap_size_ += config_.rings.heap[r];
  }
  auto heap = config_.device->malloc(heap_size_, 1024, "hbg heap");
  if (!heap.ok()) return heap.status().with_context("HbgRuntime: heap (PTO2_RING_HEAP)");
  heap_base_ = *heap;
  arena_.configure(config_.device, config_.graph_arena_bytes);
  for (int e = 0; e < executors_; ++e) executor_threads_.emplace_back([this, e] { executor_main(e); });
  return Status::Ok();
}

HbgRuntime::~HbgRuntime() {
  if (!run_finished()) {
    (void)wait_run(Deadline::after_ms(10000));
    report_fatal(PTO2_ERROR_SCHEDULER_TIMEOUT, "runtime destroyed while a run was in flight");
  }
  shutdown_.store(true, std::memory_order_seq_cst);
  work_.notify_all();
  for (auto& t : executor_threads_) t.join();
  free_run_buffers();
  arena_.release();
  for (auto& [key, def] : definitions_) {
    if (def->device != 0) (void)config_.device->free(def->device);
  }
  definitions_.clear();
  if (image_device_ != 0) (void)config_.device->free(image_device_);
  if (heap_base_ != 0) (void)config_.device->free(heap_base_);
}

void HbgRuntime::free_run_buffers() {
  for (DeviceAddr a : fallback_device_) (void)config_.device->free(a);
  fallback_device_.clear();
  submissions_.clear();
}

// ---------------------------------------------------------------- run control

Status HbgRuntime::start_run(OrchestrationEntryFn entry, BindRuntimeFn bind, const ChipTaskArgs* args,
                             const taskring_kernel_fn* kernels, uint64_t invocation_id) {
  if (!run_finished()) return failed_precondition("HbgRuntime: a run is already in flight");
  if (entry == nullptr) return invalid_argument("HbgRuntime: null orchestration entry");
  kernels_ = kernels;
  inv_ = invocation_id;
  callable_key_ = reinterpret_cast<uintptr_t>(entry);
  build_.clear();
  map_.reset();
  scopes_.clear();
  fanin_stamp_.clear();
  heap_top_ = 0;
  recording_.reset();
  free_run_buffers();
  used_keys_.clear();
  verified_defs_.clear();
  arena_.begin_run();
  stats_ = RunStats();
  gstats_ = GraphRunStats();
  completed_.store(0, std::memory_order_relaxed);
  fatal_code_.store(0, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(fatal_mu_);
    fatal_message_.clear();
  }
  sched_first_ns_.store(0, std::memory_order_relaxed);
  sched_last_ns_.store(0, std::memory_order_relaxed);
  kernel_calls_.store(0, std::memory_order_relaxed);
  nodes_run_.store(0, std::memory_order_relaxed);
  run_finished_.store(false, std::memory_order_seq_cst);

  // Host half: the whole orchestration, then the uploads.
  {
    log::strace::StraceSpan span("host_orch", invocation_id, log::strace::current_hid());
    stats_.orch_start_ns = mono_ns();
    if (bind != nullptr) bind(api());
    scopes_.push_back(0);  // the implicit outer scope
    entry(*args);
    if (bind != nullptr) bind(nullptr);
    stats_.orch_end_ns = mono_ns();
    gstats_.host_orch_ns = stats_.orch_end_ns - stats_.orch_start_ns;
    span.attr("tasks", static_cast<uint64_t>(build_.tasks.size())).attr("heap_used", heap_top_);
  }
  if (!is_fatal() && recording_ != nullptr) {
    report_fatal(PTO2_ERROR_INVALID_ARGS, "orchestration ended inside a Graph body");
  }
  finish_host_phase();
  return Status::Ok();
}

void HbgRuntime::finish_host_phase() {
  stats_.tasks_submitted = build_.tasks.size();
  gstats_.host_tasks = build_.tasks.size();
  gstats_.definitions_used = used_keys_.size();
  total_tasks_ = build_.tasks.size();
  std::vector<uint64_t> addrs;
  if (!is_fatal()) {
    Status s = upload_definitions();
    if (s.ok()) s = upload_submissions(&addrs);
    if (s.ok()) s = upload_image(addrs);
    if (!s.ok()) report_fatal(PTO2_ERROR_INVALID_ARGS, "hbg upload: " + s.message());
  }
  if (is_fatal() || total_tasks_ == 0) {
    // Nothing to schedule: a latched error blocks the upload and the launch.
    sched_last_ns_.store(mono_ns(), std::memory_order_relaxed);
    run_finished_.store(true, std::memory_order_seq_cst);
    done_.notify_all();
    return;
  }
  boot();
}

Status HbgRuntime::upload_definitions() {
  uint64_t t0 = mono_ns();
  log::strace::StraceSpan span("graph_upload", inv_, log::strace::current_hid());
  uint64_t calls = 0, bytes = 0;
  for (uint64_t key : used_keys_) {
    Definition& d = *definitions_.at(key);
    if (d.device != 0) continue;  // uploaded by an earlier run and unchanged (Definitions are immutable)
    auto dev = config_.device->malloc(d.image.size(), 64, "graph definition '" + d.body + "'");
    if (!dev.ok()) return dev.status().with_context("Definition of '" + d.body + "'");
    Status s = config_.device->copy_to_device(*dev, d.image.data(), d.image.size());
    if (!s.ok()) {
      (void)config_.device->free(*dev);
      return s.with_context("Definition of '" + d.body + "'");
    }
    d.device = *dev;
    ++calls;
    bytes += d.image.size();
  }
  span.attr("defs", calls).attr("bytes", bytes).attr("submissions", static_cast<uint64_t>(submissions_.size()));
  gstats_.graph_upload_calls = calls;
  gstats_.graph_upload_bytes = bytes;
  gstats_.graph_upload_ns = mono_ns() - t0;
  return Status::Ok();
}

Status HbgRuntime::upload_submissions(std::vector<uint64_t>* addrs) {
  uint64_t t0 = mono_ns();
  log::strace::StraceSpan span("arena_h2d", inv_, log::strace::current_hid());
  // Definitions are on the device now: patch their addresses in place.
  for (auto& p : submissions_) {
    auto* s = reinterpret_cast<graph::GraphSubmission*>(p->host);
    s->definition_addr = p->def->device;
  }
  uint64_t calls = 0, bytes = 0;
  TASKRING_RETURN_IF_ERROR(arena_.upload(&calls, &bytes));
  addrs->resize(submissions_.size());
  for (size_t i = 0; i < submissions_.size(); ++i) {
    PendingSubmission& p = *submissions_[i];
    if (p.fallback.size() == 0) {
      (*addrs)[i] = arena_.device_address(p.host);
      continue;
    }
    auto dev = config_.device->malloc(p.bytes, 64, "graph submission (arena full)");
    if (!dev.ok()) return dev.status().with_context("Graph submission " + std::to_string(i));
    fallback_device_.push_back(*dev);
    TASKRING_RETURN_IF_ERROR(config_.device->copy_to_device(*dev, p.host, p.bytes));
    ++calls;
    bytes += p.bytes;
    (*addrs)[i] = *dev;
  }
  span.attr("copies", calls).attr("bytes", bytes).attr("subs", static_cast<uint64_t>(submissions_.size()))
      .attr("fallback", gstats_.arena_fallback_submissions);
  gstats_.arena_h2d_calls = calls;
  gstats_.arena_h2d_bytes = bytes;
  gstats_.arena_h2d_ns = mono_ns() - t0;
  return Status::Ok();
}

Status HbgRuntime::upload_image(const std::vector<uint64_t>& addrs) {
  uint64_t t0 = mono_ns();
  log::strace::StraceSpan span("image_h2d", inv_, log::strace::current_hid());
  TASKRING_RETURN_IF_ERROR(build_task_image(build_, addrs, &image_));
  if (image_device_bytes_ < image_.size()) {
    if (image_device_ != 0) (void)config_.device->free(image_device_);
    image_device_ = 0;
    image_device_bytes_ = 0;
    uint64_t want = (image_.size() + 65535) & ~uint64_t{65535};
    auto dev = config_.device->malloc(want, 64, "hbg task image");
    if (!dev.ok()) return dev.status().with_context("task image");
    image_device_ = *dev;
    image_device_bytes_ = want;
  }
  TASKRING_RETURN_IF_ERROR(config_.device->copy_to_device(image_device_, image_.data(), image_.size()));
  span.attr("copies", uint64_t{1}).attr("bytes", image_.size());
  gstats_.image_h2d_calls = 1;
  gstats_.image_h2d_bytes = image_.size();
  gstats_.image_h2d_ns = mono_ns() - t0;
  return Status::Ok();
}

Status HbgRuntime::wait_run(Deadline deadline) {
  return done_.wait([this] { return run_finished(); }, deadline, "the hbg run to finish");
}

Status HbgRuntime::run_status() const {
  int32_t code = fatal_code_.load(std::memory_order_acquire);
  if (code == 0) return Status::Ok();
  std::lock_guard<std::mutex> lock(fatal_mu_);
  return Status(pto2_error_status_code(code), std::string(pto2_error_name(code)) + ": " + fatal_message_);
}

RunStats HbgRuntime::stats() const {
  RunStats s = stats_;
  s.tasks_completed = completed_.load(std::memory_order_acquire);
  s.kernel_calls = kernel_calls_.load(std::memory_order_acquire);
  s.sched_start_ns = sched_first_ns_.load(std::memory_order_acquire);
  s.sched_end_ns = sched_last_ns_.load(std::memory_order_acquire);
  return s;
}

GraphRunStats HbgRuntime::graph_stats() const {
  GraphRunStats g = gstats_;
  g.graph_nodes_run = nodes_run_.load(std::memory_order_acquire);
  return g;
}

void HbgRuntime::report_fatal(int32_t code, const std::string& message) {
  int32_t expected = 0;
  {
    std::lock_guard<std::mutex> lock(fatal_mu_);
    if (fatal_code_.compare_exchange_strong(expected, code, std::memory_order_acq_rel)) fatal_message_ = message;
  }
  work_.notify_all();
}

}  // namespace taskring::hbg
