// TmrRuntime: the tensormap_and_ringbuffer L2 runtime on the sim device.
//
// Threads (persistent across runs, parked between them):
//   - one orchestrator thread runs the orchestration entry; its rt_* calls
//     land in `submit()` and friends (single-threaded TensorMap, ring heads);
//   - E executor threads (E = min(TASKRING_SIM_THREADS, clusters)) act as the
//     control processor's schedulers *and* the cores: an executor pops a
//     ready task, occupies a core of its own clusters, runs the kernel inline,
//     completes it and releases its consumers, keeping the first newly ready
//     consumer for itself so a dependency chain never crosses threads.
// Idle threads spin briefly and then park (DESIGN.md §4): at most E+1 threads
// are ever runnable and none spins for long.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ready_queue.hpp"
#include "task_ring.hpp"
#include "tensor_map.hpp"
#include "taskring/chip/ring_config.hpp"
#include "taskring/chip/run_stats.hpp"
#include "taskring/device/device.hpp"
#include "taskring/kernels/kernel_abi.h"

namespace taskring::tmr {

struct TmrConfig {
  Device* device = nullptr;       // not owned; must outlive the runtime
  RingSizes rings;                // resolved sizes
  int executors = 2;              // capped at the cluster count
  uint64_t stall_timeout_ms = 10000;        // no-progress backstop
  uint64_t tensor_wait_timeout_ms = 15000;  // get/set_tensor_data
};

using OrchestrationEntryFn = void (*)(const ChipTaskArgs&);
using BindRuntimeFn = void (*)(PTO2Runtime*);

class TmrRuntime {
 public:
  static Expected<std::unique_ptr<TmrRuntime>> create(const TmrConfig& config);
  ~TmrRuntime();
  TmrRuntime(const TmrRuntime&) = delete;
  TmrRuntime& operator=(const TmrRuntime&) = delete;

  // Starts one run: `entry(*args)` on the orchestrator thread with `bind`
  // called first, kernels looked up in `kernels` (TASKRING_MAX_FUNC_ID
  // entries, nullptr = unregistered). `args` and `kernels` must stay valid
  // until the run finishes. Fails if a run is in flight.
  Status start_run(OrchestrationEntryFn entry, BindRuntimeFn bind, const ChipTaskArgs* args,
                   const taskring_kernel_fn* kernels, uint64_t invocation_id);
  // True once the run finished (healthy or failed).
  bool run_finished() const { return run_finished_.load(std::memory_order_acquire); }
  // Waits for the run to finish; DEADLINE_EXCEEDED leaves it running.
  Status wait_run(Deadline deadline);
  // The run's outcome (OK or the latched fatal error). Precondition: finished.
  Status run_status() const;
  RunStats stats() const;

  // ---- orchestration ops (orchestrator thread) ----
  TaskOutputTensors submit(const MixedKernels& kernels, const CoreTaskArgs& args, bool dummy, bool alloc_only);
  void scope_begin(PTO2ScopeMode mode);
  void scope_end();
  bool is_fatal() const { return fatal_code_.load(std::memory_order_acquire) != 0; }
  void report_fatal(int32_t code, const std::string& message);
  bool tensor_access(const ChipTensor& t, uint32_t ndims, const uint32_t* idx, void* data, uint32_t bytes,
                     bool write);
  int32_t cluster_count() const { return topo_.clusters; }
  Device& device() const { return *config_.device; }
  int32_t aiv_count() const { return topo_.aiv_count(); }
  PTO2Runtime* api() { return &api_.rt; }

  // The ops table hands back a PTO2Runtime*; this maps it to its owner.
  struct ApiHandle {
    PTO2Runtime rt;
    TmrRuntime* owner;
  };

 private:
  explicit TmrRuntime(const TmrConfig& config);
  Status init();

  struct Producer {
    TaskSlot* slot;
    PTO2TaskId id;
    uint8_t flags;
  };
  struct Scope {
    PTO2ScopeMode mode;
    size_t first_task;  // index into scope_tasks_
  };

  // Orchestrator helpers.
  bool allocate(TaskRing& ring, uint64_t heap_bytes, uint64_t dep_nodes, uint64_t* heap_off, uint64_t* pool_off,
                TaskSlot** out);
  bool wait_for_ring(TaskRing& ring, uint64_t observed_alive, const char* what, const std::string& knob);
  // The oldest live slot of `ring`, for stall messages.
  std::string stall_diagnostics(TaskRing& ring);
  void add_producer(Producer* list, int* n, TaskSlot* slot, PTO2TaskId id, uint8_t flags);
  TaskSlot* slot_of(PTO2TaskId id);
  void fail_args(const char* what, const std::string& detail);
  void push_ready(TaskSlot* t);
  void orchestrator_main();
  void finish_orchestration();

  // Executor helpers.
  void executor_main(int index);
  TaskSlot* pop_ready();
  void execute(TaskSlot* t, int executor, TaskSlot** next_local);
  bool run_block(TaskSlot* t, int block, int executor);
  void complete(TaskSlot* t, TaskSlot** next_local);
  void release(TaskSlot* t);
  void maybe_finish_run();

  TmrConfig config_;
  Topology topo_;
  int executors_ = 1;
  ApiHandle api_{};
  TaskRing rings_[kRingLevels];
  void* slot_memory_ = nullptr;
  size_t slot_memory_bytes_ = 0;
  std::unique_ptr<DepNode[]> dep_memory_;
  ReadyQueue<TaskSlot> queues_[kNumShapes];
  TensorMap tensor_map_;

  // Orchestrator state.
  std::vector<Scope> scopes_;
  std::vector<TaskSlot*> scope_tasks_;
  uint64_t submitted_ = 0;  // orchestrator only; published via submitted_pub_
  RunStats stats_;          // orchestrator-owned fields

  // Run control.
  OrchestrationEntryFn entry_ = nullptr;
  BindRuntimeFn bind_ = nullptr;
  const ChipTaskArgs* args_ = nullptr;
  const taskring_kernel_fn* kernels_ = nullptr;
  std::atomic<uint64_t> run_generation_{0};
  std::atomic<bool> shutdown_{false};
  std::atomic<bool> run_active_{false};
  std::atomic<bool> orch_done_{false};
  std::atomic<bool> run_finished_{true};
  std::atomic<uint64_t> submitted_pub_{0};
  alignas(64) std::atomic<uint64_t> completed_{0};
  alignas(64) std::atomic<int32_t> fatal_code_{0};
  mutable std::mutex fatal_mu_;
  std::string fatal_message_;
  std::atomic<uint64_t> sched_first_ns_{0};
  std::atomic<uint64_t> sched_last_ns_{0};
  std::atomic<uint64_t> kernel_calls_{0};
  std::atomic<uint64_t> last_progress_ns_{0};

  Waiter orch_start_;
  Waiter work_;
  Waiter ring_progress_;
  Waiter done_;
  std::thread orchestrator_;
  std::vector<std::thread> executor_threads_;
};

}  // namespace taskring::tmr
