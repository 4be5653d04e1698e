// HbgRuntime: the host_build_graph L2 runtime on the sim device.
//
// A run has two halves:
//   - host (the runtime's host thread, handed the run by start_run; the
//     calling thread itself under TASKRING_RUN_INLINE): the orchestration
//     entry runs to completion; every rt_* call appends to a host-built task list (task,
//     tensor, scalar and fanin pools; dependencies from a BuildTracker and
//     explicit deps; runtime OUTPUTs bump-allocated from one device heap).
//     rt_submit_graph records or replays Graph Definitions (graph/). Then:
//     new Definitions are uploaded (one copy each, kept across runs), every
//     Graph submission image goes up in one copy (SubmissionArena), and the
//     task image (self-relative, task_image.hpp) goes up in one copy.
//   - device (executor threads): the control processor only schedules. It
//     reads the uploaded image, queues the roots, runs kernels inline, and
//     releases consumers; a GRAPH task takes a state of its Definition's
//     ReplayPool (replay_pool.hpp), starts its nodes (one executor: runs them
//     in a loop) and completes when its last node does.
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

#include "deps/build_tracker.hpp"
#include "l2/runtime_base.hpp"
#include "l2/submit_kind.hpp"
#include "graph/aligned_buffer.hpp"
#include "graph/recording.hpp"
#include "graph/submission_arena.hpp"
#include "replay_pool.hpp"
#include "run_state.hpp"
#include "task_image.hpp"

namespace taskring::hbg {

class HbgRuntime final : public l2::RuntimeBase<HbgRuntime, Runnable> {
 public:
  ~HbgRuntime() override;

  // L2Runtime: hands the host half (the orchestration, the uploads, the start
  // of the schedule) to the host thread and returns, so the run's deadline
  // covers an orchestration that never returns (wait_run times out as on
  // tmr). Spans of the host half nest under the caller's open span.
  // TASKRING_RUN_INLINE: the whole run on the calling thread.
  Status start_run(const RunRequest& request) override;
  bool host_phase_only_supported() const override { return true; }
  GraphRunStats graph_stats() const override;

  // ---- orchestration ops (host thread; l2/runtime_ops.hpp) ----
  TaskOutputTensors submit(const MixedKernels& kernels, const CoreTaskArgs& args, l2::SubmitKind kind);
  void scope_begin(PTO2ScopeMode mode);
  void scope_end();
  bool tensor_access(const ChipTensor& t, uint32_t ndims, const uint32_t* idx, void* data, uint32_t bytes, bool write);
  GraphSubmitResult submit_graph(uint64_t key, const char* name, GraphInvokeFn invoke, const void* closure,
                                 const GraphTaskArgs& args);

  // ---- executor side (l2/runtime_base.hpp's hooks) ----
  // A run of consumers: base[index16[k]] or base[index32[k]] for k in
  // [next, count); counts_fanin: each is ready when its fanin reaches zero
  // (false for a Graph's roots, ready as they are).
  // With `pending` set, the fanin counts are that array's (a replay's ready
  // counters, indexed like base) instead of each Runnable's.
  struct Readied {
    Runnable* base = nullptr;
    const uint16_t* index16 = nullptr;
    const uint32_t* index32 = nullptr;
    int32_t* pending = nullptr;
    int32_t next = 0;
    int32_t count = 0;
    bool counts_fanin = true;
  };
  using Completion = l2::Completion<Readied>;
  // A GRAPH task expands into its replay (its roots come back ready, or
  // one executor runs it through as a loop and it completes at once);
  // everything else runs its kernels.
  l2::Started<Readied> start(Runnable* r, int executor, l2::LocalReady<Runnable>* local);
  Completion complete(Runnable* r);
  Runnable* next_ready(Readied& x);
  void retire(Runnable*) {}
  bool run_complete(uint64_t completed) const { return completed == total_tasks_; }
  std::string task_name(const Runnable* r) const;

 private:
  friend class l2::RuntimeBase<HbgRuntime, Runnable>;  // create()
  explicit HbgRuntime(const L2RuntimeConfig& config);
  Status init();

  // A Definition kept across runs (host image + its device copy).
  struct Definition {
    graph::AlignedBuffer image;
    DeviceAddr device = 0;
    std::string body;
  };
  struct PendingSubmission {
    uint8_t* host = nullptr;        // in the arena, or fallback.data()
    graph::AlignedBuffer fallback;  // arena full
    uint64_t bytes = 0;
    Definition* def = nullptr;
  };

  // Host half (hbg_submit.cpp, hbg_graph.cpp).
  bool heap_alloc(uint64_t bytes, const char* what, uint64_t* addr);
  bool new_task(const char* op, HostTask** out);
  void add_fanin(uint32_t producer);
  void collect_deps(const ChipTensor& t, TensorArgType tag);
  void register_access(const ChipTensor& t, TensorArgType tag, int32_t task);
  void fail_args(const char* what, const std::string& detail);
  void run_inline(const char* why, const std::string& body, GraphInvokeFn invoke, const void* closure,
                  const GraphTaskArgs& args, bool warn);
  bool submit_outer(Definition* def, const GraphTaskArgs& args, GraphSubmitResult* result);
  void host_main();  // the host thread: waits for a run, runs its host half
  void host_half();
  void finish_host_phase();
  Status upload_definitions();
  Status upload_submissions(std::vector<uint64_t>* addrs);
  Status upload_image(const std::vector<uint64_t>& addrs);
  void free_run_buffers();

  // Device half (hbg_scheduler.cpp).
  void boot();
  l2::Started<Readied> expand_graph(Runnable* r, int executor, l2::LocalReady<Runnable>* local);
  void run_replay_loop(GraphExec* exec, int executor, l2::LocalReady<Runnable>* local);
  // Returns the replay's state to its pool; the GRAPH task it ran for is
  // returned, to complete.
  Runnable* finish_replay(GraphExec* exec);

  uint64_t task_limit_ = 0, dep_limit_ = 0;
  DeviceAddr heap_base_ = 0;
  uint64_t heap_size_ = 0;

  // Host build state of the current run.
  HostBuild build_;
  deps::BuildTracker map_;
  std::vector<uint8_t> scopes_;        // 1 = MANUAL
  std::vector<uint32_t> fanin_stamp_;  // per task: last consumer that listed it
  uint32_t cur_task_ = 0;
  uint64_t heap_top_ = 0;
  std::unique_ptr<graph::Recording> recording_;        // the body being recorded, if any
  std::unique_ptr<graph::Recording> spare_recording_;  // kept between recordings
  std::vector<std::unique_ptr<PendingSubmission>> submissions_;
  std::unordered_map<uint64_t, std::unique_ptr<Definition>> definitions_;  // by full key, across runs
  std::unordered_set<uint64_t> used_keys_;                                 // this run
  // Bodies with a node that depends explicitly on a task outside the body:
  // run as ordinary tasks on every call (across runs, like definitions_).
  std::unordered_set<uint64_t> outside_dependent_keys_;
  graph::SubmissionArena arena_;
  std::vector<DeviceAddr> fallback_device_;  // per-submission uploads of this run
  graph::AlignedBuffer image_;
  DeviceAddr image_device_ = 0;
  uint64_t image_device_bytes_ = 0;
  uint64_t callable_key_ = 0;
  uint64_t inv_ = 0;  // invocation id of the run (spans)
  // The caller's span binding at start_run, re-bound on the host thread.
  uint64_t caller_inv_ = 0, caller_hid_ = 0;
  int caller_depth_ = 0;
  std::thread host_;
  std::atomic<uint64_t> host_generation_{0};  // bumped by start_run for the host thread
  Waiter host_start_;
  bool host_phase_only_ = false;  // this run: TASKRING_SKIP_DEVICE_RUN, stop after the uploads
  GraphRunStats gstats_;

  // Scheduler state of the current run.
  std::unique_ptr<Runnable[]> table_;
  uint64_t table_capacity_ = 0;
  uint64_t total_tasks_ = 0;
  std::unordered_set<uint64_t> verified_defs_;  // device addresses whose hash was checked this run
  // By Definition device address, across runs (replay_pool.hpp).
  std::unordered_map<uint64_t, std::unique_ptr<ReplayPool>> replay_pools_;
  std::mutex verify_mu_;  // verified_defs_, replay_pools_
  uint64_t queue_capacity_ = 0;
  std::atomic<uint64_t> nodes_run_{0};
};

}  // namespace taskring::hbg
