// The types of the orchestration API that host code and the runtimes share:
// kernel ids of a task, scope modes, a submit's outputs, an orchestration's
// config, log levels, and the versioned call table (PTO2RuntimeOps) through
// which an orchestration reaches the runtime bound to its thread.
//
// No macros and no function definitions with external linkage: including it
// (chip_worker.hpp does) gives a host file no LOG_* macros and no weak
// symbol. Orchestration sources include orchestration_api.hpp, which adds the
// calls (rt_submit_task, PTO2_SCOPE, LOG_*, ...).
#pragma once

#include <cstdint>

#include "taskring/kernels/kernel_abi.h"
#include "taskring/tensor/task_args.hpp"

namespace taskring {

// A core task's arguments reach its kernel as one int64 array (kernel_abi.h):
// tensor descriptors, then scalars, then the two comm contexts. The core's
// limits (task_args.hpp) and the kernel ABI's must be the same numbers, or a
// task accepted at submit would overflow its kernel's argument array.
static_assert(CORE_MAX_TENSOR_ARGS == TASKRING_KERNEL_MAX_TENSORS, "core tensor limit != kernel ABI's");
static_assert(CORE_MAX_SCALAR_ARGS == TASKRING_KERNEL_MAX_SCALARS, "core scalar limit != kernel ABI's");
static_assert(CORE_MAX_TENSOR_ARGS + CORE_MAX_SCALAR_ARGS == TASKRING_KERNEL_ARG_LOCAL_CONTEXT,
              "the comm contexts follow the last scalar slot");

inline constexpr int32_t INVALID_KERNEL_ID = -1;
inline constexpr int PTO2_MAX_SCOPE_DEPTH = 64;
inline constexpr int PTO2_MAX_RING_DEPTH = 4;

// Kernels of one task: an AIC kernel and up to two AIV kernels. One active
// slot makes an AIC or AIV task; two or more make a MIX task that occupies one
// cluster; none is a dummy task.
struct MixedKernels {
  int32_t aic_kernel_id = INVALID_KERNEL_ID;
  int32_t aiv0_kernel_id = INVALID_KERNEL_ID;
  int32_t aiv1_kernel_id = INVALID_KERNEL_ID;
};

enum class PTO2ScopeMode : int32_t { AUTO = 0, MANUAL = 1 };
using ScopeMode = PTO2ScopeMode;  // newer upstream spelling

// The OUTPUT tensors a submit materialised, in argument order, and the id of
// the submitted task. Valid only inside the scope where the task was
// submitted.
class TaskOutputTensors {
 public:
  // The i-th OUTPUT (0-based among outputs), lvalues only. Out-of-range i
  // returns a poisoned descriptor that every submit rejects (upstream
  // aborts).
  const ChipTensor& get_ref(uint32_t i) const& {
    return (i < static_cast<uint32_t>(count) && outputs[i] != nullptr) ? *outputs[i] : args_detail::no_tensor();
  }
  const ChipTensor& get_ref(uint32_t i) const&& = delete;
  PTO2TaskId task_id() const { return task_id_; }
  void set_task_id(PTO2TaskId id) { task_id_ = id; }
  bool is_valid() const { return task_id_.is_valid(); }
  uint32_t size() const { return static_cast<uint32_t>(count); }
  bool empty() const { return count == 0; }

  // Filled by the runtime: outputs[0, count) are set, the rest are left
  // uninitialised on purpose (zeroing 32 pointers was a tenth of a chain
  // submit's instructions); get_ref never reads past `count`.
  int32_t count = 0;
  const ChipTensor* outputs[CORE_MAX_TENSOR_ARGS];

 private:
  PTO2TaskId task_id_ = kInvalidTaskId;
};
using TaskSubmitResult = TaskOutputTensors;

struct PTO2OrchestrationConfig {
  int32_t expected_arg_count = 0;  // tensors + scalars the entry needs at least
};
using OrchestrationConfig = PTO2OrchestrationConfig;  // newer upstream spelling

enum class PTO2LogLevel : int32_t { DEBUG = 10, INFO = 20, WARN = 30, ERROR = 40 };

struct PTO2Runtime;
struct GraphSubmitResult;  // graph_api.hpp
// A Graph body bound to its config values (graph_api.hpp builds these).
using GraphInvokeFn = void (*)(const GraphTaskArgs& args, const void* closure);

// The call table of a runtime. Versioned by `abi_version` so an orchestration
// library built against another layout is rejected at load.
struct PTO2RuntimeOps {
  uint32_t abi_version;
  TaskOutputTensors (*submit_task)(PTO2Runtime*, const MixedKernels&, const CoreTaskArgs&);
  TaskOutputTensors (*submit_dummy_task)(PTO2Runtime*, const CoreTaskArgs&);
  TaskOutputTensors (*alloc_tensors)(PTO2Runtime*, const CoreTaskArgs&);
  void (*scope_begin)(PTO2Runtime*, PTO2ScopeMode);
  void (*scope_end)(PTO2Runtime*);
  bool (*is_fatal)(PTO2Runtime*);
  void (*report_fatal)(PTO2Runtime*, int32_t code, const char* message);
  void (*log)(PTO2Runtime*, PTO2LogLevel, const char* func, const char* message);
  // Element access with blocking semantics; false on error or timeout (the
  // run is then fatal).
  bool (*get_tensor_data)(PTO2Runtime*, const ChipTensor&, uint32_t ndims, const uint32_t* idx, void* out,
                          uint32_t bytes);
  bool (*set_tensor_data)(PTO2Runtime*, const ChipTensor&, uint32_t ndims, const uint32_t* idx, const void* in,
                          uint32_t bytes);
  int32_t (*available_cluster_count)(PTO2Runtime*);
  int32_t (*available_aiv_count)(PTO2Runtime*);
  // Graph Execution (graph_api.hpp); null: the runtime runs the body inline.
  // `name` is the GRAPH_KEY name or null; the closure lives for the call.
  GraphSubmitResult (*submit_graph)(PTO2Runtime*, uint64_t key, const char* name, GraphInvokeFn invoke,
                                    const void* closure, const GraphTaskArgs& args);
  // Address translation for data_as / make_tensor_external (see
  // tensor_detail::g_host_view); null: addresses are used as they are.
  void* (*host_view)(PTO2Runtime*, uint64_t addr);
  uint64_t (*device_address)(PTO2Runtime*, const void* p);
  void* reserved[5];
};

inline constexpr uint32_t PTO2_RUNTIME_OPS_ABI_VERSION = 1;

struct PTO2Runtime {
  const PTO2RuntimeOps* ops;
};

}  // namespace taskring
