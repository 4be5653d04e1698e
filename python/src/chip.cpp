// The ChipWorker binding. The run path (argument conversion, run, report) is
// all C++ so that a Python `worker.run` adds little over the C++ call; the
// GIL is released for the whole ChipWorker::run. One run at a time per
// worker: a second thread gets FAILED_PRECONDITION, never a data race.
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
#include <vector>

#include "arrays.hpp"
#include "errors.hpp"
#include "run_args.hpp"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/kernels/tile_matmul.hpp"
#include "taskring/log/init.hpp"
#include "worker_state.hpp"

namespace taskring::py {

namespace pyb = pybind11;

namespace {

class PyChipWorker {
 public:
  // `sanitize` non-empty: TASKRING_SANITIZE for this worker (docs/sanitizer.md).
  PyChipWorker(const std::string& runtime, const std::string& device, const std::string& sanitize) {
    ChipWorkerConfig cfg;
    cfg.runtime = runtime;
    cfg.device = device;
    if (!sanitize.empty()) {
      cfg.env = [base = process_env(), sanitize](std::string_view name) -> std::optional<std::string> {
        return name == "TASKRING_SANITIZE" ? std::optional<std::string>(sanitize) : base(name);
      };
    }
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
    bind_run_args(*st, args, cargs, keep);
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
                        s.kernel_calls, s.orch_blocked, s.heap_bytes, s.orch_start_ns, s.orch_end_ns, s.sched_start_ns,
                        s.sched_end_ns),
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
    bind_run_args(*st, args, cargs, keep);
    std::vector<uint64_t> ns(static_cast<size_t>(std::max(n, 0)));
    Status failed;
    {
      pyb::gil_scoped_release nogil;
      for (auto& x : ns) {
        const auto g0 = std::chrono::steady_clock::now();
        while (
            static_cast<uint64_t>(
                std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - g0).count()) <
            gap_ns) {
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

  static void check_range(const BufferState& b, uint64_t offset, uint64_t n, const char* op) {
    if (offset > b.size || n > b.size - offset) {
      throw_error(StatusCode::kOutOfRange, std::string(op) + ": " + std::to_string(n) + " bytes at offset " +
                                               std::to_string(offset) + " exceed the " + std::to_string(b.size) +
                                               " B device buffer");
    }
  }

  std::shared_ptr<WorkerState> state_;
};

}  // namespace

void bind_chip(pyb::module_& m) {
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
      .def(pyb::init<const std::string&, const std::string&, const std::string&>(), pyb::arg("runtime"),
           pyb::arg("device"), pyb::arg("sanitize") = "")
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
  m.def("_blas_info", [] {
    const tile::BlasInfo b = tile::blas_info();
    pyb::dict d;
    d["config"] = b.config;
    d["core"] = b.core;
    d["better_core"] = b.better_core;
    d["advice"] = b.advice;
    return d;
  });
}

}  // namespace taskring::py
