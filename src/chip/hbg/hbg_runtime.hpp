// HbgRuntime: the host_build_graph L2 runtime on the sim device.
//
// A run has two halves:
//   - host (start_run, on the calling thread): the orchestration entry runs to
//     completion; every rt_* call appends to a host-built task list (task,
//     tensor, scalar and fanin pools; dependencies from a DepTracker and
//     explicit deps; runtime OUTPUTs bump-allocated from one device heap).
//     rt_submit_graph records or replays Graph Definitions (graph/). Then:
//     new Definitions are uploaded (one copy each, kept across runs), every
//     Graph submission image goes up in one copy (SubmissionArena), and the
//     task image (self-relative, task_image.hpp) goes up in one copy.
//   - device (executor threads): the control processor only schedules. It
//     reads the uploaded image, queues the roots, runs kernels inline, and
//     releases consumers; a GRAPH task expands its Definition into its
//     replay's execution storage and completes when its last node does.
// Everything that cannot work before execution (a task window, heap or
// dependency pool that is too small, get_tensor_data of a task-produced
// tensor, initial values on runtime OUTPUTs) is a named error before upload.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "dep_tracker.hpp"
#include "graph/aligned_buffer.hpp"
#include "graph/recording.hpp"
#include "graph/submission_arena.hpp"
#include "run_state.hpp"
#include "task_image.hpp"
#include "taskring/base/knobs.hpp"
#include "taskring/base/waiter.hpp"
#include "taskring/chip/graph_stats.hpp"
#include "taskring/chip/ring_config.hpp"
#include "taskring/chip/run_stats.hpp"
#include "taskring/device/device.hpp"
#include "taskring/kernels/kernel_abi.h"
#include "tmr/ready_queue.hpp"

namespace taskring::hbg {

inline constexpr uint64_t kDefaultGraphArenaBytes = 4ull << 20;

struct HbgConfig {
  Device* device = nullptr;  // not owned; must outlive the runtime
  RingSizes rings;           // task window, heap and dep pool: the sums over the four rings
  int executors = 2;         // capped at the cluster count
  // Pinned arena for Graph submission images (TASKRING_GRAPH_ARENA_BYTES);
  // 0 uploads every submission on its own.
  uint64_t graph_arena_bytes = kDefaultGraphArenaBytes;
};

// Reads TASKRING_GRAPH_ARENA_BYTES (0 .. 2^34) into `config`.
Status read_hbg_knobs(const EnvLookup& env, HbgConfig* config);

using OrchestrationEntryFn = void (*)(const ChipTaskArgs&);
using BindRuntimeFn = void (*)(PTO2Runtime*);

class HbgRuntime {
 public:
  static Expected<std::unique_ptr<HbgRuntime>> create(const HbgConfig& config);
  ~HbgRuntime();
  HbgRuntime(const HbgRuntime&) = delete;
  HbgRuntime& operator=(const HbgRuntime&) = delete;

  // Runs the orchestration on this thread, uploads, and starts the schedule.
  // Errors of the run itself (bad arguments, limits) are latched and seen at
  // wait_run/run_status; the returned Status is for misuse only.
  Status start_run(OrchestrationEntryFn entry, BindRuntimeFn bind, const ChipTaskArgs* args,
                   const taskring_kernel_fn* kernels, uint64_t invocation_id);
  bool run_finished() const { return run_finished_.load(std::memory_order_acquire); }
  Status wait_run(Deadline deadline);
  Status run_status() const;
  RunStats stats() const;
  GraphRunStats graph_stats() const;
  void report_fatal(int32_t code, const std::string& message);
  bool is_fatal() const { return fatal_code_.load(std::memory_order_acquire) != 0; }

  // ---- orchestration ops (calling thread) ----
  TaskOutputTensors submit(const MixedKernels& kernels, const CoreTaskArgs& args, bool dummy, bool alloc_only);
  void scope_begin(PTO2ScopeMode mode);
  void scope_end();
  bool tensor_access(const ChipTensor& t, uint32_t ndims, const uint32_t* idx, void* data, uint32_t bytes, bool write);
  GraphSubmitResult submit_graph(uint64_t key, const char* name, GraphInvokeFn invoke, const void* closure,
                                 const GraphTaskArgs& args);
  int32_t cluster_count() const { return topo_.clusters; }
  Device& device() const { return *config_.device; }
  int32_t aiv_count() const { return topo_.aiv_count(); }
  PTO2Runtime* api() { return &api_.rt; }

  struct ApiHandle {
    PTO2Runtime rt;
    HbgRuntime* owner;
  };

 private:
  explicit HbgRuntime(const HbgConfig& config);
  Status init();

  // A Definition kept across runs (host image + its device copy).
  struct Definition {
    graph::AlignedBuffer image;
    DeviceAddr device = 0;
    std::string body;
  };
  struct PendingSubmission {
    uint8_t* host = nullptr;            // in the arena, or fallback.data()
    graph::AlignedBuffer fallback;      // arena full
    uint64_t bytes = 0;
    Definition* def = nullptr;
  };

  // Host half (hbg_submit.cpp, hbg_graph.cpp).
  bool check_args(const char* op, const MixedKernels& kernels, bool dummy, bool alloc_only, const CoreTaskArgs& args,
                  uint8_t* shape);
  bool heap_alloc(uint64_t bytes, const char* what, uint64_t* addr);
  bool new_task(const char* op, HostTask** out);
  void add_fanin(uint32_t producer);
  void collect_deps(const ChipTensor& t, TensorArgType tag);
  void register_access(const ChipTensor& t, TensorArgType tag, int32_t task);
  void fail_args(const char* what, const std::string& detail);
  void run_inline(const char* why, const std::string& body, GraphInvokeFn invoke, const void* closure,
                  const GraphTaskArgs& args, bool warn);
  bool submit_outer(Definition* def, const GraphTaskArgs& args, GraphSubmitResult* result);
  void finish_host_phase();
  Status upload_definitions();
  Status upload_submissions(std::vector<uint64_t>* addrs);
  Status upload_image(const std::vector<uint64_t>& addrs);
  void free_run_buffers();

  // Device half (hbg_scheduler.cpp).
  void boot();
  void executor_main(int index);
  Runnable* pop_ready();
  void push_ready(Runnable* r);
  void execute(Runnable* r, int executor, Runnable** next_local);
  void run_block(Runnable* r, int block, int executor);
  void expand_graph(Runnable* r, Runnable** next_local);
  void complete(Runnable* r, Runnable** next_local);
  void finish_run();

  HbgConfig config_;
  Topology topo_;
  int executors_ = 1;
  ApiHandle api_{};
  uint64_t task_limit_ = 0, dep_limit_ = 0;
  DeviceAddr heap_base_ = 0;
  uint64_t heap_size_ = 0;

  // Host build state of the current run.
  HostBuild build_;
  DepTracker map_;
  std::vector<uint8_t> scopes_;      // 1 = MANUAL
  std::vector<uint32_t> fanin_stamp_;  // per task: last consumer that listed it
  uint32_t cur_task_ = 0;
  uint64_t heap_top_ = 0;
  std::unique_ptr<graph::Recording> recording_;
  std::vector<std::unique_ptr<PendingSubmission>> submissions_;
  std::unordered_map<uint64_t, std::unique_ptr<Definition>> definitions_;  // by full key, across runs
  std::unordered_set<uint64_t> used_keys_;  // this run
  graph::SubmissionArena arena_;
  std::vector<DeviceAddr> fallback_device_;  // per-submission uploads of this run
  graph::AlignedBuffer image_;
  DeviceAddr image_device_ = 0;
  uint64_t image_device_bytes_ = 0;
  uint64_t callable_key_ = 0;
  uint64_t inv_ = 0;  // invocation id of the run (spans)
  RunStats stats_;
  GraphRunStats gstats_;

  // Run control.
  const taskring_kernel_fn* kernels_ = nullptr;
  std::unique_ptr<Runnable[]> table_;
  uint64_t table_capacity_ = 0;
  uint64_t total_tasks_ = 0;
  std::unordered_set<uint64_t> verified_defs_;  // device addresses whose hash was checked this run
  std::mutex verify_mu_;
  tmr::ReadyQueue<Runnable> queues_[4];
  uint64_t queue_capacity_ = 0;
  std::atomic<uint64_t> run_generation_{0};
  std::atomic<bool> shutdown_{false};
  std::atomic<bool> run_active_{false};
  std::atomic<bool> run_finished_{true};
  alignas(64) std::atomic<uint64_t> completed_{0};
  alignas(64) std::atomic<int32_t> fatal_code_{0};
  mutable std::mutex fatal_mu_;
  std::string fatal_message_;
  std::atomic<uint64_t> sched_first_ns_{0}, sched_last_ns_{0};
  std::atomic<uint64_t> kernel_calls_{0}, nodes_run_{0};
  Waiter work_;
  Waiter done_;
  std::vector<std::thread> executor_threads_;
};

}  // namespace taskring::hbg
