#include "tmr_runtime.hpp"

#include <sys/mman.h>

#include <algorithm>

#include "task_name.hpp"
#include "taskring/base/clock.hpp"

namespace taskring::tmr {

// ---------------------------------------------------------------- lifecycle

TmrRuntime::TmrRuntime(const L2RuntimeConfig& config) : RuntimeBase(config) {}

Status TmrRuntime::init() {
  // Slot, dependency-node and argument storage is reserved, not committed:
  // only what a run touches costs memory (zero pages are the initial state), so the
  // upstream default window (16384 per ring) is cheap, also in time: value-
  // initialising the 1 MiB of nodes took a page fault per 4 KiB at a chip's
  // first run. The nodes get a mapping of their own: laid out after the
  // slots in the slots' mapping (1a7e2af) they cost the threaded runtime
  // 1.2x per task on chain, fan-out and mix8 (scripts/bench-compare;
  // docs/benchmarks.md#l2-hot-path).
  uint64_t total_slots = 0, total_nodes = 0;
  for (int r = 0; r < kRingLevels; ++r) {
    total_slots += config_.rings.task_window[r];
    total_nodes += config_.rings.dep_pool[r];
  }
  uint64_t total_arg_units = 0;
  for (int r = 0; r < kRingLevels; ++r)
    total_arg_units += TaskRing::kHotArgUnits + (config_.rings.task_window[r] + 1) * ArgLayout::kMaxUnits;
  // Reserves `bytes` (a mapping of its own) into *at, or says what failed.
  auto reserve = [](size_t bytes, void** at, size_t* size, const char* what) -> Status {
    *size = bytes;
    *at = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (*at != MAP_FAILED) return Status::Ok();
    *at = nullptr;
    return unavailable("TmrRuntime: cannot reserve " + std::to_string(bytes) + " bytes of " + what);
  };
  TASKRING_RETURN_IF_ERROR(reserve(total_slots * sizeof(TaskSlot), &slot_memory_, &slot_memory_bytes_, "task slots"));
  TASKRING_RETURN_IF_ERROR(
      reserve(total_nodes * sizeof(DepNode), &dep_memory_, &dep_memory_bytes_, "dependency nodes"));
  TASKRING_RETURN_IF_ERROR(
      reserve(total_arg_units * sizeof(ChipTensor), &arg_memory_, &arg_memory_bytes_, "task arguments"));
  TaskSlot* slots = static_cast<TaskSlot*>(slot_memory_);
  ChipTensor* arg_units = static_cast<ChipTensor*>(arg_memory_);
  DepNode* nodes = static_cast<DepNode*>(dep_memory_);
  for (int r = 0; r < kRingLevels; ++r) {
    TaskRing& ring = rings_[r];
    ring.index = r;
    ring.window = config_.rings.task_window[r];
    ring.slots = slots;
    slots += ring.window;
    ring.dep_nodes = nodes;
    ring.dep_pool.set_size(config_.rings.dep_pool[r]);
    nodes += ring.dep_pool.size;
    ring.hot_arg_units = arg_units;
    ring.hot_args.set_size(TaskRing::kHotArgUnits);
    arg_units += ring.hot_args.size;
    ring.arg_units = arg_units;
    ring.args.set_size((ring.window + 1) * ArgLayout::kMaxUnits);
    arg_units += ring.args.size;
    ring.heap.set_size(config_.rings.heap[r]);
    auto heap = config_.device->malloc(ring.heap.size, 1024, "tmr heap ring " + std::to_string(r));
    if (!heap.ok())
      return heap.status().with_context("TmrRuntime: heap ring " + std::to_string(r) + " (PTO2_RING_HEAP)");
    ring.heap_base = *heap;
  }
  size_queues(total_slots + 16);

  if (!config_.run_inline) orchestrator_ = std::thread([this] { orchestrator_main(); });
  start_executors();
  return Status::Ok();
}

TmrRuntime::~TmrRuntime() {
  stop_executors();
  if (orchestrator_.joinable()) orchestrator_.join();
  for (auto& ring : rings_) {
    if (ring.heap_base != 0) (void)config_.device->free(ring.heap_base);
  }
  if (slot_memory_ != nullptr) munmap(slot_memory_, slot_memory_bytes_);
  if (dep_memory_ != nullptr) munmap(dep_memory_, dep_memory_bytes_);
  if (arg_memory_ != nullptr) munmap(arg_memory_, arg_memory_bytes_);
}

// ---------------------------------------------------------------- run control

Status TmrRuntime::start_run(const RunRequest& request) {
  TASKRING_RETURN_IF_ERROR(begin_run(request, "TmrRuntime"));
  for (auto& ring : rings_) ring.reset_counters();
  policy_ = l2::SubmitPolicy();
  policy_.kernels = request_.kernels;
  policy_.device = config_.device;
  policy_.topology = topo_;
  policy_.window = config_.device->linear_window();
  tensor_map_.reset();
  scopes_.clear();
  scope_tasks_.clear();
  submitted_ = 0;
  submitted_pub_.store(0, std::memory_order_relaxed);
  orch_done_.store(false, std::memory_order_relaxed);
  executors_sit_out_ = request.tasks_on_orchestrator && !config_.run_inline && !request.orchestrate_here;
  tasks_here_ = config_.run_inline || executors_sit_out_;
  orch_feeding_.store(!tasks_here_, std::memory_order_relaxed);  // published by the gate's opening
  if (config_.run_inline) {
    gate_.open();
    orchestrate();
    run_inline_until_finished();
    return Status::Ok();
  }
  if (request.orchestrate_here) {
    // No orchestrator thread to wake (nor to admit: orchestrate() returns
    // before the next begin_run), and no executor for the first ready task.
    gate_.open_quiet();
    orchestrate();
    if (!gate_.end_quiet()) return Status::Ok();  // no push woke nobody: nothing is left unannounced
    // A run of one task: this thread runs it (as executor 0's helper, like
    // scope_end's drain: not with profiling or the sanitizer, whose records
    // are per executor), which costs no wake and no park. Otherwise the
    // task that woke nobody needs the executors (a later push may have
    // woken them already; a second wake is harmless). An orchestration
    // blocked before it returns woke them itself (wake_if_deferred), and
    // any other wait is bounded by the executors' 50 ms look between runs.
    if (submitted_ == 1 && config_.profile == nullptr && config_.sanitizer == nullptr)
      run_ready_here();
    else
      gate_.wake_all();
    return Status::Ok();
  }
  gate_.admit();  // the orchestrator leaves after finish_orchestration()
  gate_.open();
  orch_generation_.fetch_add(1, std::memory_order_seq_cst);
  orch_start_.notify_all();
  return Status::Ok();
}

std::string TmrRuntime::task_name(const TaskSlot* t) const { return tmr::task_name(t->id); }

void TmrRuntime::wake_blocked() {
  orch_start_.notify_all();
  ring_progress_.notify_all();
}

void TmrRuntime::orchestrator_main() {
  uint64_t seen_generation = 0;
  while (true) {
    uint64_t gen = 0;
    while (true) {
      if (gate_.shutting_down()) return;
      gen = orch_generation_.load(std::memory_order_acquire);
      if (gen != seen_generation) break;
      uint32_t epoch = orch_start_.begin_park();
      if (gate_.shutting_down() || orch_generation_.load(std::memory_order_acquire) != seen_generation) {
        orch_start_.cancel_park();
        continue;
      }
      orch_start_.finish_park(epoch, 50'000'000);
    }
    seen_generation = gen;
    orchestrate();
    // RunRequest::tasks_on_orchestrator: what the orchestration left, this
    // thread runs too, as an inline run's caller does.
    if (executors_sit_out_) run_inline_until_finished();
    gate_.leave();
  }
}

void TmrRuntime::orchestrate() {
  stats_.orch_start_ns = mono_ns();
  if (request_.bind != nullptr) request_.bind(api());
  scope_begin(PTO2ScopeMode::AUTO);  // the implicit outer scope (ring 0)
  if (auto thrown = call_orchestration(request_.entry, *request_.args)) {
    report_fatal(PTO2_ERROR_EXPLICIT_ORCH_FATAL, *thrown);
  }
  // Close scopes the entry left open (a missing rt_scope_end), then the
  // outer one.
  while (!scopes_.empty()) scope_end();
  if (request_.bind != nullptr) request_.bind(nullptr);
  finish_orchestration();
}

void TmrRuntime::finish_orchestration() {
  stats_.orch_end_ns = mono_ns();
  stats_.tasks_submitted = submitted_;
  submitted_pub_.store(submitted_, std::memory_order_seq_cst);
  orch_feeding_.store(false, std::memory_order_relaxed);
  orch_done_.store(true, std::memory_order_seq_cst);
  gate_.notify_work();
  end_run_if_complete();
}

}  // namespace taskring::tmr
