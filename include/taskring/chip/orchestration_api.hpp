// The orchestration API: what an orchestration function calls to build its
// task graph. Source-compatible with upstream's `pto_orchestration_api.h`
// (include that name; it forwards here).
//
// An orchestration is a function `void aicpu_orchestration_entry(const
// ChipTaskArgs&)`, optionally with `PTO2OrchestrationConfig
// aicpu_orchestration_config(const ChipTaskArgs&)`, linked into the program or
// loaded from a shared library. It has no link dependency on taskring: every
// call goes through the `PTO2RuntimeOps` table of the runtime bound to the
// calling thread (`framework_bind_runtime`).
//
// After a fatal error (latched by the runtime or by rt_report_fatal) every
// call is a no-op that returns empty results; the run ends with the error.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "taskring/chip/error_codes.hpp"
#include "taskring/tensor/task_args.hpp"

namespace taskring {

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

namespace orch_detail {
// The runtime bound to this orchestration thread. thread_local so that
// several chips (ChipWorkers) can orchestrate concurrently in one process.
inline thread_local PTO2Runtime* g_bound_runtime = nullptr;
inline PTO2Runtime* rt() { return g_bound_runtime; }
inline bool live() { return g_bound_runtime != nullptr && !g_bound_runtime->ops->is_fatal(g_bound_runtime); }
inline void* host_view(uint64_t addr) { return g_bound_runtime->ops->host_view(g_bound_runtime, addr); }
inline uint64_t device_address(const void* p) { return g_bound_runtime->ops->device_address(g_bound_runtime, p); }
}  // namespace orch_detail

}  // namespace taskring

// Binds `rt` to the calling thread for this linkage unit. Weak so that every
// orchestration library (and the main program) carries exactly one copy
// without a separate helper source; the runtime calls it (via dlsym for a
// shared library) on its orchestrator thread before the entry.
extern "C" __attribute__((weak, visibility("default"), used)) void framework_bind_runtime(taskring::PTO2Runtime* rt) {
  taskring::orch_detail::g_bound_runtime = rt;
  const bool maps = rt != nullptr && rt->ops->host_view != nullptr && rt->ops->device_address != nullptr;
  taskring::tensor_detail::g_host_view = maps ? taskring::orch_detail::host_view : nullptr;
  taskring::tensor_detail::g_device_address = maps ? taskring::orch_detail::device_address : nullptr;
}

namespace taskring {

inline TaskOutputTensors rt_submit_task(const MixedKernels& kernels, const CoreTaskArgs& args) {
  if (!orch_detail::live()) return {};
  return orch_detail::rt()->ops->submit_task(orch_detail::rt(), kernels, args);
}
inline TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, const CoreTaskArgs& args) {
  return rt_submit_task(MixedKernels{kernel_id, INVALID_KERNEL_ID, INVALID_KERNEL_ID}, args);
}
inline TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, const CoreTaskArgs& args) {
  return rt_submit_task(MixedKernels{INVALID_KERNEL_ID, kernel_id, INVALID_KERNEL_ID}, args);
}
// A task that takes part in dependencies but never runs on a core.
inline TaskOutputTensors rt_submit_dummy_task(const CoreTaskArgs& args) {
  if (!orch_detail::live()) return {};
  return orch_detail::rt()->ops->submit_dummy_task(orch_detail::rt(), args);
}
// Allocates the OUTPUT tensors of `args` (only OUTPUTs allowed) from the heap
// ring as one allocation task that completes at once.
inline TaskOutputTensors alloc_tensors(const CoreTaskArgs& args) {
  if (!orch_detail::live()) return {};
  return orch_detail::rt()->ops->alloc_tensors(orch_detail::rt(), args);
}
template <typename... Infos>
inline TaskOutputTensors alloc_tensors(const TensorCreateInfo& first, const Infos&... rest) {
  CoreTaskArgs args;
  args.add_output(first);
  (args.add_output(rest), ...);
  return alloc_tensors(args);
}

inline void rt_scope_begin(PTO2ScopeMode mode = PTO2ScopeMode::AUTO) {
  if (orch_detail::rt() != nullptr) orch_detail::rt()->ops->scope_begin(orch_detail::rt(), mode);
}
inline void rt_scope_begin(PTO2ScopeMode mode, TaskDomain /*domain: one die, no effect*/) { rt_scope_begin(mode); }
inline void rt_scope_end() {
  if (orch_detail::rt() != nullptr) orch_detail::rt()->ops->scope_end(orch_detail::rt());
}

// RAII scope: `PTO2_SCOPE() { ... }` or `PTO2_SCOPE(PTO2ScopeMode::MANUAL) { ... }`.
class PTO2ScopeGuard {
 public:
  explicit PTO2ScopeGuard(PTO2ScopeMode mode = PTO2ScopeMode::AUTO) { rt_scope_begin(mode); }
  ~PTO2ScopeGuard() { rt_scope_end(); }
  PTO2ScopeGuard(const PTO2ScopeGuard&) = delete;
  PTO2ScopeGuard& operator=(const PTO2ScopeGuard&) = delete;
};
// Newer upstream spelling, with its TaskDomain argument (no effect, see
// TaskDomain): `SIMPLER_SCOPE(ScopeMode::MANUAL, TaskDomain::DIE0) { ... }`.
class ScopeGuard {
 public:
  explicit ScopeGuard(ScopeMode mode = ScopeMode::AUTO, TaskDomain domain = TaskDomain::GLOBAL) {
    rt_scope_begin(mode, domain);
  }
  ~ScopeGuard() { rt_scope_end(); }
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;
};

inline bool rt_is_fatal() { return orch_detail::rt() == nullptr || orch_detail::rt()->ops->is_fatal(orch_detail::rt()); }

inline void rt_report_fatal(int32_t code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
inline void rt_report_fatal(int32_t code, const char* fmt, ...) {
  if (orch_detail::rt() == nullptr) return;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  orch_detail::rt()->ops->report_fatal(orch_detail::rt(), code, buf);
}

inline void rt_log(PTO2LogLevel level, const char* func, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
inline void rt_log(PTO2LogLevel level, const char* func, const char* fmt, ...) {
  if (orch_detail::rt() == nullptr) return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  orch_detail::rt()->ops->log(orch_detail::rt(), level, func, buf);
}

inline int32_t rt_available_cluster_count() {
  return orch_detail::rt() ? orch_detail::rt()->ops->available_cluster_count(orch_detail::rt()) : 0;
}
inline int32_t rt_available_aiv_count() {
  return orch_detail::rt() ? orch_detail::rt()->ops->available_aiv_count(orch_detail::rt()) : 0;
}

// Reads one element after every producer of it has completed. As upstream,
// reads the element's elem_size bytes whatever T is, zero-extends them to 64
// bits and returns the low sizeof(T) bytes as a T (so the default T =
// uint64_t gives the raw element bits). Returns T{} after a fatal error or a
// timeout (which makes the run fatal).
template <typename T = uint64_t>
inline T get_tensor_data(const ChipTensor& t, uint32_t ndims, const uint32_t* idx) {
  static_assert(sizeof(T) <= sizeof(uint64_t) && std::is_trivially_copyable_v<T>,
                "get_tensor_data: T must be a trivially copyable type of at most 8 bytes");
  uint64_t bits = 0;
  if (!orch_detail::live()) return from_u64<T>(0);
  const uint32_t es = static_cast<uint32_t>(t.elem_size());
  // A malformed descriptor (elem_size 0 or > 8) is passed through with its
  // own size so the runtime reports it.
  orch_detail::rt()->ops->get_tensor_data(orch_detail::rt(), t, ndims, idx, &bits, es <= 8 ? es : 0);
  return from_u64<T>(bits);
}
// Writes one element after every producer and reader of it has finished.
// As upstream, writes the low elem_size bytes of `to_u64(value)`.
template <typename T = uint64_t>
inline void set_tensor_data(const ChipTensor& t, uint32_t ndims, const uint32_t* idx, T value) {
  if (!orch_detail::live()) return;
  const uint64_t bits = to_u64(value);
  const uint32_t es = static_cast<uint32_t>(t.elem_size());
  orch_detail::rt()->ops->set_tensor_data(orch_detail::rt(), t, ndims, idx, &bits, es <= 8 ? es : 0);
}

}  // namespace taskring

#define PTO2_SCOPE_CONCAT_INNER_(a, b) a##b
#define PTO2_SCOPE_CONCAT_(a, b) PTO2_SCOPE_CONCAT_INNER_(a, b)
#define PTO2_SCOPE(...) \
  if (::taskring::PTO2ScopeGuard PTO2_SCOPE_CONCAT_(_pto2_scope_, __LINE__){__VA_ARGS__}; true)
// A scope from here to the end of the enclosing block: `PTO2_SCOPE_GUARD();`
// or `PTO2_SCOPE_GUARD(PTO2ScopeMode::MANUAL);`.
#define PTO2_SCOPE_GUARD(...) \
  [[maybe_unused]] ::taskring::PTO2ScopeGuard PTO2_SCOPE_CONCAT_(_pto2_scope_guard_, __COUNTER__) { __VA_ARGS__ }

// Newer upstream spellings of the two scope macros.
#define SIMPLER_SCOPE(...) \
  if (::taskring::ScopeGuard PTO2_SCOPE_CONCAT_(_simpler_scope_, __LINE__){__VA_ARGS__}; true)
#define SIMPLER_SCOPE_GUARD(...) \
  [[maybe_unused]] ::taskring::ScopeGuard PTO2_SCOPE_CONCAT_(_simpler_scope_guard_, __COUNTER__) { __VA_ARGS__ }

#ifndef TASKRING_NO_ORCH_LOG_MACROS
#define LOG_DEBUG(...) ::taskring::rt_log(::taskring::PTO2LogLevel::DEBUG, __func__, __VA_ARGS__)
#define LOG_INFO(...) ::taskring::rt_log(::taskring::PTO2LogLevel::INFO, __func__, __VA_ARGS__)
#define LOG_WARN(...) ::taskring::rt_log(::taskring::PTO2LogLevel::WARN, __func__, __VA_ARGS__)
#define LOG_ERROR(...) ::taskring::rt_log(::taskring::PTO2LogLevel::ERROR, __func__, __VA_ARGS__)
#endif

#include "taskring/chip/graph_api.hpp"
