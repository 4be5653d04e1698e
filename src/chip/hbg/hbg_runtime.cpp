#include "hbg_runtime.hpp"

#include <algorithm>
#include <cstring>

#include "graph/submission.hpp"
#include "taskring/base/clock.hpp"
#include "taskring/log/strace.hpp"

namespace taskring::hbg {

HbgRuntime::HbgRuntime(const L2RuntimeConfig& config) : RuntimeBase(config) {}

Status HbgRuntime::init() {
  for (int r = 0; r < kRingLevels; ++r) {
    task_limit_ += config_.rings.task_window[r];
    dep_limit_ += config_.rings.dep_pool[r];
    heap_size_ += config_.rings.heap[r];
  }
  auto heap = config_.device->malloc(heap_size_, 1024, "hbg heap");
  if (!heap.ok()) return heap.status().with_context("HbgRuntime: heap (PTO2_RING_HEAP)");
  heap_base_ = *heap;
  arena_.configure(config_.device, config_.graph_arena_bytes);
  start_executors();
  if (!config_.run_inline) host_ = std::thread([this] { host_main(); });
  return Status::Ok();
}

HbgRuntime::~HbgRuntime() {
  stop_executors();
  host_start_.notify_all();  // the gate is shut down: the host thread returns
  if (host_.joinable()) host_.join();
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

Status HbgRuntime::start_run(const RunRequest& request) {
  // After begin_run no executor reads the previous run's queues or task
  // table, which boot() may re-size.
  TASKRING_RETURN_IF_ERROR(begin_run(request, "HbgRuntime"));
  inv_ = request.invocation_id;
  host_phase_only_ = request.host_phase_only;
  callable_key_ = reinterpret_cast<uintptr_t>(request.entry);
  build_.clear();
  map_.reset();
  scopes_.clear();
  fanin_stamp_.clear();
  heap_top_ = 0;
  recording_.reset();
  free_run_buffers();
  used_keys_.clear();
  verified_defs_.clear();
  for (auto& [addr, pool] : replay_pools_) pool->reset_between_runs();
  arena_.begin_run();
  gstats_ = GraphRunStats();
  nodes_run_.store(0, std::memory_order_relaxed);
  caller_inv_ = log::strace::current_invocation();
  caller_hid_ = log::strace::current_hid();
  caller_depth_ = log::strace::current_depth();
  if (config_.run_inline) {
    host_half();
    return Status::Ok();
  }
  gate_.admit();  // the host thread leaves after the host half: the next begin_run waits for it
  host_generation_.fetch_add(1, std::memory_order_seq_cst);
  host_start_.notify_all();
  return Status::Ok();
}

void HbgRuntime::host_main() {
  uint64_t seen = 0;
  while (true) {
    while (true) {
      if (gate_.shutting_down()) return;
      if (host_generation_.load(std::memory_order_acquire) != seen) break;
      const uint32_t epoch = host_start_.begin_park();
      if (gate_.shutting_down() || host_generation_.load(std::memory_order_acquire) != seen) {
        host_start_.cancel_park();
        continue;
      }
      host_start_.finish_park(epoch, 50'000'000);
    }
    seen = host_generation_.load(std::memory_order_acquire);
    host_half();
    gate_.leave();
  }
}

// The whole orchestration, then the uploads and the start of the schedule.
void HbgRuntime::host_half() {
  log::strace::InvocationScope bound(caller_inv_, caller_hid_, caller_depth_);
  const RunRequest& request = request_;
  {
    log::strace::StraceSpan span("host_orch", inv_, log::strace::current_hid());
    stats_.orch_start_ns = mono_ns();
    if (request.bind != nullptr) request.bind(api());
    scopes_.push_back(0);  // the implicit outer scope
    if (auto thrown = call_orchestration(request.entry, *request.args)) {
      report_fatal(PTO2_ERROR_EXPLICIT_ORCH_FATAL, *thrown);
    }
    if (request.bind != nullptr) request.bind(nullptr);
    stats_.orch_end_ns = mono_ns();
    gstats_.host_orch_ns = stats_.orch_end_ns - stats_.orch_start_ns;
    span.attr("tasks", static_cast<uint64_t>(build_.tasks.size())).attr("heap_used", heap_top_);
  }
  if (!is_fatal() && recording_ != nullptr) {
    report_fatal(PTO2_ERROR_INVALID_ARGS, "orchestration ended inside a Graph body");
  }
  finish_host_phase();
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
  if (is_fatal() || total_tasks_ == 0 || host_phase_only_) {
    // Nothing to schedule: a latched error blocks the upload and the launch;
    // under TASKRING_SKIP_DEVICE_RUN the host half was the whole run.
    publish_finished();
    return;
  }
  boot();
  if (config_.run_inline) run_inline_until_finished();
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
  span.attr("copies", calls)
      .attr("bytes", bytes)
      .attr("subs", static_cast<uint64_t>(submissions_.size()))
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

GraphRunStats HbgRuntime::graph_stats() const {
  GraphRunStats g = gstats_;
  g.graph_nodes_run = nodes_run_.load(std::memory_order_acquire);
  return g;
}

}  // namespace taskring::hbg
