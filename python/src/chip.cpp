// The ChipWorker binding. The run path (argument conversion, run, report) is
// all C++ so that a Python `worker.run` adds little over the C++ call; the
// GIL is released for the whole ChipWorker::run.
//
// Lifetimes: a _ChipWorker owns a shared WorkerState; _DeviceBuffers hold a
// weak reference to it, so a buffer outliving its worker (or used after
// free) raises instead of touching freed device memory. One run at a time
// per worker: a second thread gets FAILED_PRECONDITION, never a data race.
#include "chip.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "arrays.hpp"
#include "errors.hpp"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/kernels/builtin.hpp"
#include "taskring/kernels/registry.hpp"
#include "taskring/log/init.hpp"
#include "taskring/workloads/catalog.hpp"

namespace taskring::py {

namespace pyb = pybind11;

namespace {

// ---------------------------------------------------------------- callables

struct PyCallable {
  ChipCallable callable;
  // Keeps a built-in workload alive as long as its orchestration may run.
  std::shared_ptr<workloads::Workload> workload;
  std::string source;  // "library:<path>" or "workload:<name>"
};

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

// ------------------------------------------------------------------ workers

struct WorkerState {
  std::unique_ptr<ChipWorker> worker;
  std::mutex mu;  // one run / memory call at a time
  // Registered callables by identity; the shared_ptr pins the address.
  std::vector<std::pair<std::shared_ptr<PyCallable>, int>> callables;
  // Per-run scratch, reused under `mu` so a run allocates nothing here.
  std::vector<ChipTensor> tensors = std::vector<ChipTensor>(ChipTaskArgs::kTensorCapacity);
  std::string runtime, device;
  uint64_t last_native_ns = 0;  // ChipWorker::run alone, in the last run() (bench/python)
};

struct BufferState {
  uint64_t addr = 0;
  uint64_t size = 0;
  bool freed = false;
};

struct PyDeviceBuffer {
  std::weak_ptr<WorkerState> owner;
  std::shared_ptr<BufferState> state;
  std::string tag;
};

// A tensor argument with an explicit view (or over a device buffer).
struct PyTensor {
  pyb::object data;  // numpy array or _DeviceBuffer
  int tag = 0;
  std::optional<int> dtype;
  std::optional<std::vector<uint32_t>> shape, strides;
  uint64_t offset = 0;
};

class PyChipWorker {
 public:
  PyChipWorker(const std::string& runtime, const std::string& device) {
    ChipWorkerConfig cfg;
    cfg.runtime = runtime;
    cfg.device = device;
    auto w = ChipWorker::create(cfg);
    if (!w.ok()) throw_status(w.status().with_context("ChipWorker"));
    state_ = std::make_shared<WorkerState>();
    state_->worker = std::move(*w);
    state_->runtime = runtime;
    state_->device = device;
  }

  std::shared_ptr<WorkerState> live(const char* op) const {
    if (!state_) throw_error(StatusCode::kFailedPrecondition, std::string(op) + ": the worker is closed");
    return state_;
  }

  std::unique_lock<std::mutex> lock(WorkerState& st, const char* op) const {
    std::unique_lock<std::mutex> l(st.mu, std::try_to_lock);
    if (!l.owns_lock()) {
      throw_error(StatusCode::kFailedPrecondition,
                  std::string(op) + ": another thread is using this worker (one run at a time per worker)");
    }
    return l;
  }

  int register_callable(const std::shared_ptr<PyCallable>& c) {
    auto st = live("register");
    auto l = lock(*st, "register");
    return id_for(*st, c);
  }

  pyb::tuple run(const std::shared_ptr<PyCallable>& c, const pyb::sequence& args, uint64_t timeout_ms) {
    auto st = live("run");
    auto l = lock(*st, "run");
    const int id = id_for(*st, c);
    ChipTaskArgs cargs;
    std::vector<pyb::object> keep;
    bind_args(*st, args, cargs, keep);
    RunConfig cfg;
    cfg.timeout_ms = timeout_ms;
    Expected<RunReport> r = Status();
    {
      pyb::gil_scoped_release nogil;
      const auto t0 = std::chrono::steady_clock::now();
      r = st->worker->run(id, cargs, cfg);
      st->last_native_ns = static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
    }
    if (!r.ok()) throw_status(r.status());
    const RunReport& x = *r;
    const RunStats& s = x.stats;
    const GraphRunStats& g = x.graph;
    return pyb::make_tuple(
        pyb::make_tuple(s.tasks_submitted, s.tasks_completed, s.kernel_tasks, s.dummy_tasks, s.alloc_tasks,
                        s.kernel_calls, s.orch_blocked, s.heap_bytes, s.orch_start_ns, s.orch_end_ns,
                        s.sched_start_ns, s.sched_end_ns),
        x.h2d_calls, x.h2d_bytes, x.d2h_calls, x.d2h_bytes, x.bind_ns, x.run_ns, x.validate_ns, x.invocation_id,
        x.skipped_device_run,
        pyb::make_tuple(g.host_tasks, g.graph_tasks, g.graph_nodes_run, g.definitions_used, g.definitions_recorded,
                        g.nodes_recorded, g.fallbacks, g.host_orch_ns, g.record_ns, g.graph_upload_ns,
                        g.graph_upload_calls, g.graph_upload_bytes, g.arena_h2d_ns, g.arena_h2d_calls,
                        g.arena_h2d_bytes, g.arena_submissions, g.arena_fallback_submissions, g.image_h2d_ns,
                        g.image_h2d_calls, g.image_h2d_bytes));
  }

  // For bench/python: the same arguments run `n` times straight from C++
  // (converted once, GIL released throughout); the ns of each run. `gap_ns`
  // of busy host work between runs reproduces a caller's spacing (the
  // runtime's idle threads behave differently back to back).
  std::vector<uint64_t> run_native(const std::shared_ptr<PyCallable>& c, const pyb::sequence& args, int n,
                                   uint64_t gap_ns) {
    auto st = live("_run_native");
    auto l = lock(*st, "_run_native");
    const int id = id_for(*st, c);
    ChipTaskArgs cargs;
    std::vector<pyb::object> keep;
    bind_args(*st, args, cargs, keep);
    std::vector<uint64_t> ns(static_cast<size_t>(std::max(n, 0)));
    Status failed;
    {
      pyb::gil_scoped_release nogil;
      for (auto& x : ns) {
        const auto g0 = std::chrono::steady_clock::now();
        while (static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now() - g0).count()) < gap_ns) {
        }
        const auto t0 = std::chrono::steady_clock::now();
        auto r = st->worker->run(id, cargs, RunConfig{});
        x = static_cast<uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
        if (!r.ok()) {
          failed = r.status();
          break;
        }
      }
    }
    if (!failed.ok()) throw_status(failed);
    return ns;
  }

  uint64_t last_native_ns() const { return live("_last_native_ns")->last_native_ns; }

  PyDeviceBuffer malloc(uint64_t bytes, uint64_t alignment, const std::string& tag) {
    auto st = live("malloc");
    auto l = lock(*st, "malloc");
    auto a = st->worker->device().malloc(bytes, alignment, tag);
    if (!a.ok()) throw_status(a.status().with_context("malloc"));
    PyDeviceBuffer b;
    b.owner = st;
    b.state = std::make_shared<BufferState>(BufferState{*a, bytes, false});
    b.tag = tag;
    return b;
  }

  void copy_to(const PyDeviceBuffer& dst, const pyb::array& src, uint64_t offset) {
    auto st = live("copy_to");
    auto l = lock(*st, "copy_to");
    const BufferState& b = check_buffer(*st, dst, "copy_to");
    if (!(src.flags() & pyb::array::c_style)) {
      throw_error(StatusCode::kInvalidArgument, "copy_to: source array is not C-contiguous");
    }
    const uint64_t n = static_cast<uint64_t>(src.nbytes());
    check_range(b, offset, n, "copy_to");
    Status s;
    {
      pyb::gil_scoped_release nogil;
      s = st->worker->device().copy_to_device(b.addr + offset, src.data(), n);
    }
    if (!s.ok()) throw_status(s.with_context("copy_to"));
  }

  void copy_from(pyb::array& dst, const PyDeviceBuffer& src, uint64_t offset) {
    auto st = live("copy_from");
    auto l = lock(*st, "copy_from");
    const BufferState& b = check_buffer(*st, src, "copy_from");
    if (!(dst.flags() & pyb::array::c_style)) {
      throw_error(StatusCode::kInvalidArgument, "copy_from: destination array is not C-contiguous");
    }
    if (!dst.writeable()) throw_error(StatusCode::kInvalidArgument, "copy_from: destination array is read-only");
    const uint64_t n = static_cast<uint64_t>(dst.nbytes());
    check_range(b, offset, n, "copy_from");
    Status s;
    void* out = dst.mutable_data();
    {
      pyb::gil_scoped_release nogil;
      s = st->worker->device().copy_from_device(out, b.addr + offset, n);
    }
    if (!s.ok()) throw_status(s.with_context("copy_from"));
  }

  void free(PyDeviceBuffer& buf) {
    auto st = live("free");
    auto l = lock(*st, "free");
    BufferState& b = check_buffer(*st, buf, "free");
    Status s = st->worker->device().free(b.addr);
    if (!s.ok()) throw_status(s.with_context("free"));
    b.freed = true;
  }

  pyb::dict topology() {
    auto st = live("topology");
    Topology t = st->worker->topology();
    pyb::dict d;
    d["clusters"] = t.clusters;
    d["executor_threads"] = t.executor_threads;
    d["aic"] = t.aic_count();
    d["aiv"] = t.aiv_count();
    d["cores"] = t.core_count();
    return d;
  }

  pyb::dict counters() {
    auto st = live("counters");
    DeviceCounters c = st->worker->device().counters();
    pyb::dict d;
    d["h2d_calls"] = c.h2d_calls;
    d["h2d_bytes"] = c.h2d_bytes;
    d["d2h_calls"] = c.d2h_calls;
    d["d2h_bytes"] = c.d2h_bytes;
    d["link_charged_ns"] = c.link_charged_ns;
    return d;
  }

  void close() {
    if (!state_) return;
    {
      auto l = lock(*state_, "close");
      state_->worker.reset();
    }
    state_.reset();
  }

  bool closed() const { return !state_; }
  std::string runtime() const { return live("runtime")->runtime; }
  std::string device() const { return live("device")->device; }

 private:
  static int id_for(WorkerState& st, const std::shared_ptr<PyCallable>& c) {
    if (!c) throw_error(StatusCode::kInvalidArgument, "callable is None");
    for (const auto& [p, id] : st.callables) {
      if (p == c) return id;
    }
    auto id = st.worker->register_callable(c->callable);
    if (!id.ok()) throw_status(id.status().with_context("register callable '" + c->callable.name + "'"));
    st.callables.emplace_back(c, *id);
    return *id;
  }

  BufferState& check_buffer(WorkerState& st, const PyDeviceBuffer& b, const char* op) const {
    auto owner = b.owner.lock();
    if (!b.state || !owner || owner->worker == nullptr) {
      throw_error(StatusCode::kFailedPrecondition, std::string(op) + ": the buffer's worker is closed");
    }
    if (owner.get() != &st) {
      throw_error(StatusCode::kInvalidArgument, std::string(op) + ": the buffer belongs to another worker");
    }
    if (b.state->freed) {
      throw_error(StatusCode::kFailedPrecondition,
                  std::string(op) + ": device buffer " + hex(b.state->addr) + " was freed");
    }
    return *b.state;
  }

  static void check_range(const BufferState& b, uint64_t offset, uint64_t n, const char* op) {
    if (offset > b.size || n > b.size - offset) {
      throw_error(StatusCode::kOutOfRange, std::string(op) + ": " + std::to_string(n) + " bytes at offset " +
                                               std::to_string(offset) + " exceed the " + std::to_string(b.size) +
                                               " B device buffer");
    }
  }

  static std::string hex(uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
  }

  static TensorArgType tag_of(const pyb::handle& h, const std::string& what) {
    long v = PyLong_AsLong(h.ptr());
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      throw_error(StatusCode::kInvalidArgument, what + ": the tag must be taskring.INPUT, OUTPUT, INOUT, "
                                                       "OUTPUT_EXISTING or NO_DEP");
    }
    if (v < 0 || v > 4) {
      throw_error(StatusCode::kInvalidArgument, what + ": tag " + std::to_string(v) + " outside 0..4");
    }
    // An array the run writes is an existing output at the entry: the
    // runtime cannot allocate host memory for Python.
    auto t = static_cast<TensorArgType>(v);
    return t == TensorArgType::OUTPUT ? TensorArgType::OUTPUT_EXISTING : t;
  }

  static bool writes(TensorArgType t) { return t == TensorArgType::INOUT || t == TensorArgType::OUTPUT_EXISTING; }

  void add_tensor(WorkerState& st, ChipTaskArgs& cargs, const ChipTensor& t, TensorArgType tag) const {
    const int i = cargs.tensor_count();
    if (i >= ChipTaskArgs::kTensorCapacity) {
      throw_error(StatusCode::kInvalidArgument, "run: more than " + std::to_string(ChipTaskArgs::kTensorCapacity) +
                                                    " tensor arguments");
    }
    st.tensors[static_cast<size_t>(i)] = t;
    cargs.add_tensor(st.tensors[static_cast<size_t>(i)], tag);
  }

  // Converts `args`; every tensor argument object is appended to `keep` so
  // that its memory outlives the run even if another thread drops the
  // caller's list while the GIL is released.
  void bind_args(WorkerState& st, const pyb::sequence& args, ChipTaskArgs& cargs,
                 std::vector<pyb::object>& keep) const {
    const size_t n = args.size();
    for (size_t i = 0; i < n; ++i) {
      pyb::object a = args[i];
      PyObject* p = a.ptr();
      const int tensors_before = cargs.tensor_count();
      if (PyTuple_Check(p) && PyTuple_GET_SIZE(p) == 2 && pyb::isinstance<pyb::array>(PyTuple_GET_ITEM(p, 0))) {
        const std::string what = "argument " + std::to_string(i);
        const TensorArgType tag = tag_of(PyTuple_GET_ITEM(p, 1), what);
        auto arr = pyb::reinterpret_borrow<pyb::array>(PyTuple_GET_ITEM(p, 0));
        add_tensor(st, cargs, host_tensor(arr, ViewSpec{}, writes(tag), what), tag);
      } else if (pyb::isinstance<PyTensor>(a)) {
        const std::string what = "argument " + std::to_string(i);
        const PyTensor& t = a.cast<const PyTensor&>();
        const TensorArgType tag = tag_of(pyb::int_(t.tag), what);
        ViewSpec v;
        if (t.dtype) v.dtype = static_cast<DataType>(*t.dtype);
        v.shape = t.shape;
        v.strides = t.strides;
        v.offset = t.offset;
        if (pyb::isinstance<PyDeviceBuffer>(t.data)) {
          const BufferState& b = check_buffer(st, t.data.cast<const PyDeviceBuffer&>(), what.c_str());
          add_tensor(st, cargs, device_tensor(b.addr, b.size, v, what), tag);
        } else if (pyb::isinstance<pyb::array>(t.data)) {
          add_tensor(st, cargs, host_tensor(pyb::reinterpret_borrow<pyb::array>(t.data), v, writes(tag), what), tag);
        } else {
          throw_error(StatusCode::kInvalidArgument, what + ": Tensor data must be a numpy array or a DeviceBuffer");
        }
      } else if (pyb::isinstance<pyb::array>(a)) {
        throw_error(StatusCode::kInvalidArgument,
                    "argument " + std::to_string(i) + ": a bare array; pass (array, taskring.INPUT) or another tag");
      } else if (PyBool_Check(p)) {
        cargs.add_scalar<uint64_t>(p == Py_True ? 1 : 0);
      } else if (!PyLong_CheckExact(p) && !PyFloat_CheckExact(p) && PyObject_HasAttrString(p, "dtype") &&
                 PyObject_HasAttrString(p, "item")) {
        // Before the float check: numpy.float64 is a float subclass but keeps its width.
        add_numpy_scalar(cargs, a, i);
      } else if (PyLong_Check(p)) {
        add_int_scalar(cargs, p, i);
      } else if (PyFloat_Check(p)) {
        // As the C++ examples' add_scalar(1.0f): a Python float is a float32.
        cargs.add_scalar(static_cast<float>(PyFloat_AS_DOUBLE(p)));
      } else {
        throw_error(StatusCode::kInvalidArgument,
                    "argument " + std::to_string(i) + ": expected (array, tag), taskring.Tensor(...) or a number, got " +
                        std::string(Py_TYPE(p)->tp_name));
      }
      if (cargs.has_error()) {
        throw_error(StatusCode::kInvalidArgument, "argument " + std::to_string(i) + ": " + cargs.error_msg());
      }
      if (cargs.tensor_count() != tensors_before) keep.push_back(std::move(a));
    }
  }

  static void add_int_scalar(ChipTaskArgs& cargs, PyObject* p, size_t i) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
    if (overflow == 0) {
      cargs.add_scalar<int64_t>(v);
      return;
    }
    unsigned long long u = PyLong_AsUnsignedLongLong(p);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      throw_error(StatusCode::kOutOfRange, "argument " + std::to_string(i) + ": integer scalar does not fit 64 bits");
    }
    cargs.add_scalar<uint64_t>(u);
  }

  // numpy scalars keep their width: float32 as a float, float64 as a double,
  // integers sign- or zero-extended.
  static void add_numpy_scalar(ChipTaskArgs& cargs, const pyb::object& a, size_t i) {
    pyb::dtype dt = pyb::reinterpret_borrow<pyb::object>(a.attr("dtype")).cast<pyb::dtype>();
    const char kind = dt.kind();
    const auto size = dt.itemsize();
    if (kind == 'f' && size == 4) {
      cargs.add_scalar(a.attr("item")().cast<float>());
    } else if (kind == 'f' && size == 8) {
      cargs.add_scalar(a.attr("item")().cast<double>());
    } else if (kind == 'i') {
      cargs.add_scalar<int64_t>(a.attr("item")().cast<int64_t>());
    } else if (kind == 'u') {
      cargs.add_scalar<uint64_t>(a.attr("item")().cast<uint64_t>());
    } else if (kind == 'b') {
      cargs.add_scalar<uint64_t>(a.attr("item")().cast<bool>() ? 1 : 0);
    } else {
      throw_error(StatusCode::kInvalidArgument, "argument " + std::to_string(i) + ": numpy scalar of dtype " +
                                                    pyb::str(pyb::handle(dt)).cast<std::string>() + " is not a taskring scalar");
    }
  }

  std::shared_ptr<WorkerState> state_;
};

}  // namespace

void bind_chip(pyb::module_& m) {
  pyb::class_<PyCallable, std::shared_ptr<PyCallable>>(m, "_Callable")
      .def_static("from_library", &callable_from_library, pyb::arg("path"), pyb::arg("kernels"), pyb::arg("name"),
                  pyb::arg("entry_symbol"), pyb::arg("config_symbol"))
      .def_static("from_workload", &callable_from_workload, pyb::arg("workload"), pyb::arg("kernels"))
      .def_property_readonly("name", [](const PyCallable& c) { return c.callable.name; })
      .def_property_readonly("source", [](const PyCallable& c) { return c.source; })
      .def_property_readonly("kernels", [](const PyCallable& c) {
        pyb::dict d;
        for (const auto& k : c.callable.kernels) d[pyb::int_(k.func_id)] = k.library.empty() ? k.name : k.library;
        return d;
      });

  pyb::class_<PyDeviceBuffer>(m, "_DeviceBuffer")
      .def_property_readonly("addr", [](const PyDeviceBuffer& b) { return b.state ? b.state->addr : 0; })
      .def_property_readonly("nbytes", [](const PyDeviceBuffer& b) { return b.state ? b.state->size : 0; })
      .def_property_readonly("tag", [](const PyDeviceBuffer& b) { return b.tag; })
      .def_property_readonly("freed", [](const PyDeviceBuffer& b) {
        auto o = b.owner.lock();
        return !b.state || b.state->freed || !o || o->worker == nullptr;
      });

  pyb::class_<PyTensor>(m, "_Tensor")
      .def(pyb::init([](pyb::object data, int tag, std::optional<int> dtype, std::optional<std::vector<uint32_t>> shape,
                        std::optional<std::vector<uint32_t>> strides, uint64_t offset) {
             return PyTensor{std::move(data), tag, dtype, std::move(shape), std::move(strides), offset};
           }),
           pyb::arg("data"), pyb::arg("tag"), pyb::arg("dtype"), pyb::arg("shape"), pyb::arg("strides"),
           pyb::arg("offset"))
      .def_readonly("data", &PyTensor::data)
      .def_readonly("tag", &PyTensor::tag)
      .def_readonly("dtype", &PyTensor::dtype)
      .def_readonly("shape", &PyTensor::shape)
      .def_readonly("strides", &PyTensor::strides)
      .def_readonly("offset", &PyTensor::offset);

  pyb::class_<PyChipWorker>(m, "_ChipWorker")
      .def(pyb::init<const std::string&, const std::string&>(), pyb::arg("runtime"), pyb::arg("device"))
      .def("register", &PyChipWorker::register_callable)
      .def("run", &PyChipWorker::run, pyb::arg("callable"), pyb::arg("args"), pyb::arg("timeout_ms"))
      .def("_run_native", &PyChipWorker::run_native, pyb::arg("callable"), pyb::arg("args"), pyb::arg("n"),
           pyb::arg("gap_ns") = 0)
      .def_property_readonly("_last_native_ns", &PyChipWorker::last_native_ns)
      .def("malloc", &PyChipWorker::malloc, pyb::arg("nbytes"), pyb::arg("alignment"), pyb::arg("tag"))
      .def("copy_to", &PyChipWorker::copy_to, pyb::arg("dst"), pyb::arg("src"), pyb::arg("offset"))
      .def("copy_from", &PyChipWorker::copy_from, pyb::arg("dst"), pyb::arg("src"), pyb::arg("offset"))
      .def("free", &PyChipWorker::free, pyb::arg("buffer"))
      .def("topology", &PyChipWorker::topology)
      .def("counters", &PyChipWorker::counters)
      .def("close", &PyChipWorker::close)
      .def_property_readonly("closed", &PyChipWorker::closed)
      .def_property_readonly("runtime", &PyChipWorker::runtime)
      .def_property_readonly("device", &PyChipWorker::device);

  m.def("_init_logging", [] {
    Status s = log::init_logging(process_env());
    if (!s.ok()) throw_status(s.with_context("taskring logging"));
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
