// The orchestration API's call table (PTO2RuntimeOps) for an L2 runtime.
//
// An orchestration calls rt_* functions, which dispatch through the table of
// the runtime bound to the calling thread. `RuntimeBinding<R>` is what a
// runtime binds: the PTO2Runtime the API sees, plus the runtime behind it.
// `runtime_ops<R>()` builds the table once per runtime type from R's members:
//
//   TaskOutputTensors submit(const MixedKernels&, const CoreTaskArgs&, SubmitKind);
//   void scope_begin(PTO2ScopeMode);  void scope_end();
//   bool is_fatal() const;  void report_fatal(int32_t code, const std::string&);
//   bool tensor_access(const ChipTensor&, uint32_t ndims, const uint32_t* idx, void* data, uint32_t bytes,
//                      bool write);
//   int32_t cluster_count() const;  int32_t aiv_count() const;
//   Device* device() const;   // data_as / make_tensor_external in an orchestration (exec/address_map.hpp)
//   optional: GraphSubmitResult submit_graph(uint64_t key, const char* name, GraphInvokeFn, const void* closure,
//                                            const GraphTaskArgs&);
//
// Without submit_graph the table's entry is null and graph_api runs Graph
// bodies inline.
#pragma once

#include <string>

#include "exec/address_map.hpp"
#include "orchestration_log.hpp"
#include "submit_kind.hpp"
#include "taskring/chip/error_codes.hpp"
#include "taskring/chip/graph_api.hpp"
#include "taskring/chip/orchestration_api.hpp"

namespace taskring::l2 {

template <typename R>
struct RuntimeBinding {
  PTO2Runtime rt;  // first: the API's PTO2Runtime* is the binding's address
  R* owner;
};

namespace ops_detail {

template <typename R>
R* self(PTO2Runtime* rt) {
  return reinterpret_cast<RuntimeBinding<R>*>(rt)->owner;
}

template <typename R>
struct Table {
  static TaskOutputTensors submit(PTO2Runtime* rt, const MixedKernels& k, const CoreTaskArgs& a) {
    return self<R>(rt)->submit(k, a, SubmitKind::kKernel);
  }
  static TaskOutputTensors dummy(PTO2Runtime* rt, const CoreTaskArgs& a) {
    return self<R>(rt)->submit(MixedKernels{}, a, SubmitKind::kDummy);
  }
  static TaskOutputTensors alloc(PTO2Runtime* rt, const CoreTaskArgs& a) {
    return self<R>(rt)->submit(MixedKernels{}, a, SubmitKind::kAllocOnly);
  }
  static void scope_begin(PTO2Runtime* rt, PTO2ScopeMode m) { self<R>(rt)->scope_begin(m); }
  static void scope_end(PTO2Runtime* rt) { self<R>(rt)->scope_end(); }
  static bool is_fatal(PTO2Runtime* rt) { return self<R>(rt)->is_fatal(); }
  static void report_fatal(PTO2Runtime* rt, int32_t code, const char* msg) {
    self<R>(rt)->report_fatal(code == 0 ? PTO2_ERROR_EXPLICIT_ORCH_FATAL : code,
                              std::string("rt_report_fatal: ") + (msg != nullptr ? msg : ""));
  }
  static void log(PTO2Runtime*, PTO2LogLevel level, const char* func, const char* msg) {
    orchestration_log(level, func, msg);
  }
  static bool get(PTO2Runtime* rt, const ChipTensor& t, uint32_t nd, const uint32_t* idx, void* out, uint32_t bytes) {
    return self<R>(rt)->tensor_access(t, nd, idx, out, bytes, false);
  }
  static bool set(PTO2Runtime* rt, const ChipTensor& t, uint32_t nd, const uint32_t* idx, const void* in,
                  uint32_t bytes) {
    return self<R>(rt)->tensor_access(t, nd, idx, const_cast<void*>(in), bytes, true);
  }
  static void* host_view(PTO2Runtime* rt, uint64_t addr) {
    return exec::orchestration_host_view(*self<R>(rt)->device(), addr);
  }
  static uint64_t device_address(PTO2Runtime* rt, const void* p) {
    return exec::orchestration_device_address(*self<R>(rt)->device(), p);
  }
  static int32_t clusters(PTO2Runtime* rt) { return self<R>(rt)->cluster_count(); }
  static int32_t aivs(PTO2Runtime* rt) { return self<R>(rt)->aiv_count(); }
  static GraphSubmitResult graph(PTO2Runtime* rt, uint64_t key, const char* name, GraphInvokeFn invoke,
                                 const void* closure, const GraphTaskArgs& args) {
    return self<R>(rt)->submit_graph(key, name, invoke, closure, args);
  }
};

template <typename R>
constexpr auto graph_entry() {
  if constexpr (requires(R r, GraphInvokeFn f, const GraphTaskArgs& a) { r.submit_graph(0, nullptr, f, nullptr, a); }) {
    return &Table<R>::graph;
  } else {
    return static_cast<decltype(&Table<R>::graph)>(nullptr);
  }
}

}  // namespace ops_detail

template <typename R>
const PTO2RuntimeOps* runtime_ops() {
  using T = ops_detail::Table<R>;
  static const PTO2RuntimeOps kOps = {PTO2_RUNTIME_OPS_ABI_VERSION,
                                      &T::submit,
                                      &T::dummy,
                                      &T::alloc,
                                      &T::scope_begin,
                                      &T::scope_end,
                                      &T::is_fatal,
                                      &T::report_fatal,
                                      &T::log,
                                      &T::get,
                                      &T::set,
                                      &T::clusters,
                                      &T::aivs,
                                      ops_detail::graph_entry<R>(),
                                      &T::host_view,
                                      &T::device_address,
                                      {}};
  return &kOps;
}

}  // namespace taskring::l2
