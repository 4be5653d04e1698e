#include "callables.hpp"

#include <pybind11/stl.h>

#include <algorithm>
#include <vector>

#include "errors.hpp"
#include "taskring/kernels/builtin.hpp"
#include "taskring/kernels/registry.hpp"
#include "taskring/node/collectives.hpp"
#include "taskring/workloads/catalog.hpp"

namespace taskring::py {

namespace pyb = pybind11;

namespace {

// Resolves the {func_id: name or path} map into kernel bindings.
std::vector<KernelBinding> kernel_bindings(const std::unordered_map<int32_t, std::string>& kernels,
                                           const std::string& where) {
  kernels::KernelRegistry builtins;
  Status s = kernels::register_builtin_kernels(builtins);
  if (!s.ok()) throw_status(s.with_context(where));
  std::vector<KernelBinding> out;
  std::vector<int32_t> ids;
  for (const auto& [fid, _] : kernels) ids.push_back(fid);
  std::sort(ids.begin(), ids.end());
  for (int32_t fid : ids) {
    const std::string& v = kernels.at(fid);
    KernelBinding b;
    b.func_id = fid;
    b.name = v;
    bool is_builtin = false;
    for (int32_t id = kernels::builtin_id::kBuiltinBase;
         id < kernels::builtin_id::kBuiltinBase + kernels::builtin_id::kBuiltinCount; ++id) {
      if (builtins.name(id) == v) {
        b.fn = builtins.find(id);
        is_builtin = true;
        break;
      }
    }
    if (!is_builtin) {
      if (v.find('/') == std::string::npos && v.find(".so") == std::string::npos) {
        std::string known;
        for (int32_t id = kernels::builtin_id::kBuiltinBase;
             id < kernels::builtin_id::kBuiltinBase + kernels::builtin_id::kBuiltinCount; ++id) {
          known += (known.empty() ? "" : ", ") + std::string(builtins.name(id));
        }
        throw_error(StatusCode::kNotFound, where + ": kernel " + std::to_string(fid) + " = '" + v +
                                               "' is neither a built-in kernel (" + known +
                                               ") nor a shared library path");
      }
      b.library = v;
    }
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace

std::shared_ptr<PyCallable> callable_from_library(const std::string& path,
                                                  const std::unordered_map<int32_t, std::string>& kernels,
                                                  const std::string& name, const std::string& entry_symbol,
                                                  const std::string& config_symbol) {
  if (path.empty()) throw_error(StatusCode::kInvalidArgument, "Callable.from_library: empty path");
  auto c = std::make_shared<PyCallable>();
  c->callable.name = name.empty() ? path : name;
  c->callable.orchestration_library = path;
  c->callable.entry_symbol = entry_symbol;
  c->callable.config_symbol = config_symbol;
  c->callable.kernels = kernel_bindings(kernels, "callable '" + c->callable.name + "'");
  c->source = "library:" + path;
  return c;
}

std::shared_ptr<PyCallable> callable_from_workload(const std::string& workload,
                                                   const std::unordered_map<int32_t, std::string>& kernels) {
  auto w = workloads::make_workload(workload);
  if (!w.ok()) throw_status(w.status().with_context("Callable.workload"));
  auto c = std::make_shared<PyCallable>();
  c->workload = std::shared_ptr<workloads::Workload>(std::move(*w));
  c->callable = c->workload->callable();
  auto extra = kernel_bindings(kernels, "callable '" + c->callable.name + "'");
  c->callable.kernels.insert(c->callable.kernels.end(), extra.begin(), extra.end());
  c->source = "workload:" + workload;
  return c;
}

void bind_callables(pyb::module_& m) {
  pyb::class_<PyCallable, std::shared_ptr<PyCallable>>(m, "_Callable")
      .def_static("from_library", &callable_from_library, pyb::arg("path"), pyb::arg("kernels"), pyb::arg("name"),
                  pyb::arg("entry_symbol"), pyb::arg("config_symbol"))
      .def_static("from_workload", &callable_from_workload, pyb::arg("workload"), pyb::arg("kernels"))
      .def_static("comm",
                  [] {
                    auto c = std::make_shared<PyCallable>();
                    c->callable = node::comm_call_callable();
                    c->source = "builtin:comm_call";
                    return c;
                  })
      .def_property_readonly("name", [](const PyCallable& c) { return c.callable.name; })
      .def_property_readonly("source", [](const PyCallable& c) { return c.source; })
      .def_property_readonly("kernels", [](const PyCallable& c) {
        pyb::dict d;
        for (const auto& k : c.callable.kernels) d[pyb::int_(k.func_id)] = k.library.empty() ? k.name : k.library;
        return d;
      });
  m.def("_builtin_kernels", [] {
    kernels::KernelRegistry r;
    Status s = kernels::register_builtin_kernels(r);
    if (!s.ok()) throw_status(s);
    pyb::dict d;
    for (int32_t id = kernels::builtin_id::kBuiltinBase;
         id < kernels::builtin_id::kBuiltinBase + kernels::builtin_id::kBuiltinCount; ++id) {
      d[pyb::str(std::string(r.name(id)))] = id;
    }
    return d;
  });
  m.def("_workloads", [] {
    pyb::list l;
    for (const auto& e : workloads::catalog()) l.append(std::string(e.name));
    return l;
  });
}

}  // namespace taskring::py
