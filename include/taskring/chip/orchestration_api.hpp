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
//
// For orchestration sources only: it defines the unprefixed LOG_* macros and
// the weak `framework_bind_runtime`. Host code (a program that registers and
// runs callables) includes chip_worker.hpp, which takes the types it needs
// from orchestration_types.hpp.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "taskring/chip/error_codes.hpp"
#include "taskring/chip/orchestration_binding.hpp"
#include "taskring/chip/orchestration_types.hpp"
#include "taskring/tensor/task_args.hpp"

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

inline bool rt_is_fatal() {
  return orch_detail::rt() == nullptr || orch_detail::rt()->ops->is_fatal(orch_detail::rt());
}

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
#define PTO2_SCOPE(...) if (::taskring::PTO2ScopeGuard PTO2_SCOPE_CONCAT_(_pto2_scope_, __LINE__){__VA_ARGS__}; true)
// A scope from here to the end of the enclosing block: `PTO2_SCOPE_GUARD();`
// or `PTO2_SCOPE_GUARD(PTO2ScopeMode::MANUAL);`.
#define PTO2_SCOPE_GUARD(...) \
  [[maybe_unused]] ::taskring::PTO2ScopeGuard PTO2_SCOPE_CONCAT_(_pto2_scope_guard_, __COUNTER__) { __VA_ARGS__ }

// Newer upstream spellings of the two scope macros.
#define SIMPLER_SCOPE(...) if (::taskring::ScopeGuard PTO2_SCOPE_CONCAT_(_simpler_scope_, __LINE__){__VA_ARGS__}; true)
#define SIMPLER_SCOPE_GUARD(...) \
  [[maybe_unused]] ::taskring::ScopeGuard PTO2_SCOPE_CONCAT_(_simpler_scope_guard_, __COUNTER__) { __VA_ARGS__ }

#ifndef TASKRING_NO_ORCH_LOG_MACROS
#define LOG_DEBUG(...) ::taskring::rt_log(::taskring::PTO2LogLevel::DEBUG, __func__, __VA_ARGS__)
#define LOG_INFO(...) ::taskring::rt_log(::taskring::PTO2LogLevel::INFO, __func__, __VA_ARGS__)
#define LOG_WARN(...) ::taskring::rt_log(::taskring::PTO2LogLevel::WARN, __func__, __VA_ARGS__)
#define LOG_ERROR(...) ::taskring::rt_log(::taskring::PTO2LogLevel::ERROR, __func__, __VA_ARGS__)
#endif

#include "taskring/chip/graph_api.hpp"
