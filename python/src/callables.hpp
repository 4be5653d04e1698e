// Callables from Python: an orchestration (shared library or built-in
// workload) plus its kernels given as {func_id: built-in name or library path}.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "taskring/chip/chip_worker.hpp"
#include "taskring/workloads/workload.hpp"

namespace taskring::py {

struct PyCallable {
  ChipCallable callable;
  // Keeps a built-in workload alive as long as its orchestration may run.
  std::shared_ptr<workloads::Workload> workload;
  std::string source;  // "library:<path>" or "workload:<name>"
};

// An orchestration shared library; kernels resolved now (names) or at
// registration (library paths). Raises NOT_FOUND for an unknown kernel name.
std::shared_ptr<PyCallable> callable_from_library(const std::string& path,
                                                  const std::unordered_map<int32_t, std::string>& kernels,
                                                  const std::string& name, const std::string& entry_symbol,
                                                  const std::string& config_symbol);

// The orchestration of the catalog workload `workload`, plus extra kernels.
std::shared_ptr<PyCallable> callable_from_workload(const std::string& workload,
                                                   const std::unordered_map<int32_t, std::string>& kernels);

// _Callable, _builtin_kernels, _workloads.
void bind_callables(pybind11::module_& m);

}  // namespace taskring::py
