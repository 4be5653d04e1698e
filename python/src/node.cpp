#include "node.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "callables.hpp"
#include "errors.hpp"
#include "node_comm.hpp"
#include "run_args.hpp"
#include "taskring/node/node_worker.hpp"
#include "worker_state.hpp"

namespace taskring::py {

namespace pyb = pybind11;

namespace {

// What a _NodeWorker and the arrays over its shared heap share: the heap is
// unmapped only when the C++ worker is destroyed, so an array that holds
// this state can never outlive its memory, also after close().
struct NodeState {
  std::unique_ptr<node::NodeWorker> worker;
  node::NodeConfig config;
  // Registered chip callables by identity, with their handles (the
  // shared_ptr keeps a built-in workload's orchestration alive), and the SUB
  // functions the children call (kept referenced here); both only grow
  // before init(), which hands them to the children.
  std::vector<std::pair<std::shared_ptr<PyCallable>, int>> chip_callables;
  std::vector<pyb::object> sub_functions;
  // Handle -> (is SUB, id at the node): chip and SUB callables share one numbering.
  std::vector<std::pair<bool, int>> handles;
  bool initialised = false;
  bool closed = false;
};

// Bytes of a `shape` x `t` tensor; raises naming `op` for a 0 dimension or
// a size past 64 bits.
uint64_t byte_size(const std::vector<uint32_t>& shape, DataType t, const char* op) {
  uint64_t bytes = element_size(t);
  for (uint32_t d : shape) {
    if (d == 0) throw_error(StatusCode::kInvalidArgument, std::string(op) + ": a dimension is 0");
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes))
      throw_error(StatusCode::kInvalidArgument, std::string(op) + ": the shape's byte size overflows 64 bits");
  }
  return bytes;
}

// A numpy view of a host tensor the SUB child was given (no copy: the base
// is a capsule that owns nothing, and the memory is the shared heap).
pyb::array host_view(const ChipTensor& t) {
  std::vector<pyb::ssize_t> shape, strides;
  for (uint32_t d = 0; d < t.ndims; ++d) {
    shape.push_back(t.shapes[d]);
    strides.push_back(static_cast<pyb::ssize_t>(t.strides[d] * t.elem_size()));
  }
  pyb::capsule base(reinterpret_cast<void*>(t.data_addr()), [](void*) {});
  return pyb::array(numpy_dtype_of(t.dtype), shape, strides, reinterpret_cast<void*>(t.data_addr()), base);
}

// The SUB callable behind a Python function: called in a SUB child, whose
// one thread forked from the thread holding the GIL. The function object is
// borrowed: NodeState keeps the reference, and a child's copy of it lives
// as long as the child.
node::SubFunction sub_function(PyObject* fn, const std::string& name) {
  return [fn, name](const ChipTaskArgs& a) -> Status {
    pyb::gil_scoped_acquire gil;
    try {
      pyb::list tensors, scalars;
      for (int i = 0; i < a.tensor_count(); ++i) tensors.append(host_view(*a.tensor(i)));
      for (int i = 0; i < a.scalar_count(); ++i) scalars.append(pyb::int_(a.scalar(i)));
      pyb::handle f(fn);
      f(tensors, scalars);
      return Status::Ok();
    } catch (pyb::error_already_set& e) {
      return internal_error("SUB function '" + name + "' raised " + e.what());
    } catch (const std::exception& e) {
      return internal_error("SUB function '" + name + "': " + e.what());
    }
  };
}

// Python task arguments -> ChipTaskArgs, as ChipWorker.run takes them; the
// node copies the descriptors at submit, so the storage is per call.
struct ConvertedArgs {
  WorkerState storage;
  ChipTaskArgs args;
  std::vector<pyb::object> keep;
};

std::unique_ptr<ConvertedArgs> convert(const pyb::sequence& args, const NodeArgContext& ctx) {
  auto c = std::make_unique<ConvertedArgs>();
  bind_run_args(c->storage, args, c->args, c->keep, &ctx);
  return c;
}

// A group's members, converted one by one; `members` points into `held`.
struct ConvertedGroup {
  std::vector<std::unique_ptr<ConvertedArgs>> held;
  std::vector<const ChipTaskArgs*> members;
};

// Member i runs on chips[i] (-1 for every member of a SUB group).
ConvertedGroup convert_group(const std::vector<pyb::sequence>& args_list, NodeArgContext ctx,
                             const std::vector<int>* chips) {
  ConvertedGroup g;
  for (size_t i = 0; i < args_list.size(); ++i) {
    ctx.chip = chips != nullptr ? (*chips)[i] : -1;
    g.held.push_back(convert(args_list[i], ctx));
    g.members.push_back(&g.held.back()->args);
  }
  return g;
}

// The orchestrator handed to one orch function; inert once it returns.
struct PyNodeOrchestrator {
  node::Orchestrator* o = nullptr;
  std::shared_ptr<NodeState> st;
  // Identifies this run to the tensors its alloc() returns (PyHeapTensor).
  std::shared_ptr<void> run_token = std::make_shared<char>(0);

  NodeArgContext args_for(int chip) const { return NodeArgContext{run_token, st, chip}; }

  node::Orchestrator& live(const char* op) const {
    if (o == nullptr)
      throw_error(StatusCode::kFailedPrecondition,
                  std::string(op) + ": this orchestrator belongs to an orch function that has returned");
    return *o;
  }
  int id_of(int handle, bool sub, const char* op) const {
    if (handle < 0 || handle >= static_cast<int>(st->handles.size()))
      throw_error(StatusCode::kNotFound, std::string(op) + ": handle " + std::to_string(handle) +
                                             " was not returned by this worker's register()");
    const auto [is_sub, id] = st->handles[static_cast<size_t>(handle)];
    if (is_sub != sub)
      throw_error(StatusCode::kInvalidArgument,
                  std::string(op) + ": handle " + std::to_string(handle) + " is a " +
                      (is_sub ? "SUB function" : "chip callable") +
                      (sub ? "; submit it with submit_next_level" : "; submit it with submit_sub"));
    return id;
  }
  static void check(const Status& s) {
    if (!s.ok()) throw_status(s);
  }
  // Upstream's submits take a CallConfig; the node runs every chip task with
  // its defaults, so only None is accepted, and anything else says so.
  static void no_config(const pyb::object& config, const char* op) {
    if (!config.is_none())
      throw_error(StatusCode::kUnimplemented,
                  std::string(op) + ": a CallConfig is not supported by taskring's node; pass None (the defaults)");
  }

  void submit_next_level(int handle, const pyb::sequence& args, const pyb::object& config, int worker) {
    node::Orchestrator& o = live("submit_next_level");
    no_config(config, "submit_next_level");
    const int id = id_of(handle, false, "submit_next_level");
    auto a = convert(args, args_for(worker));
    check(o.submit_next_level(id, a->args, worker));
  }
  void submit_next_level_group(int handle, const std::vector<pyb::sequence>& args, const pyb::object& config,
                               const std::vector<int>& workers) {
    node::Orchestrator& o = live("submit_next_level_group");
    no_config(config, "submit_next_level_group");
    const int id = id_of(handle, false, "submit_next_level_group");
    if (args.size() != workers.size())
      throw_error(StatusCode::kInvalidArgument, "submit_next_level_group: " + std::to_string(args.size()) +
                                                    " argument lists for " + std::to_string(workers.size()) +
                                                    " workers");
    const ConvertedGroup g = convert_group(args, args_for(-1), &workers);
    check(o.submit_next_level_group(id, g.members, workers));
  }
  void submit_sub(int handle, const pyb::object& args) {
    node::Orchestrator& o = live("submit_sub");
    const int id = id_of(handle, true, "submit_sub");
    auto a = convert(args.is_none() ? pyb::sequence(pyb::list()) : args.cast<pyb::sequence>(), args_for(-1));
    check(o.submit_sub(id, a->args));
  }
  PyHeapTensor alloc(const std::vector<uint32_t>& shape, int dtype) {
    node::Orchestrator& o = live("alloc");
    // The wait for heap space (NodeConfig::heap_wait_ms) needs the run's
    // tasks to retire, which may need a SUB child, never this thread.
    auto t = [&] {
      pyb::gil_scoped_release nogil;
      return o.alloc(std::span<const uint32_t>(shape), static_cast<DataType>(dtype));
    }();
    if (!t.ok()) throw_status(t.status());
    return PyHeapTensor{*t, run_token};
  }
  // ---- chip memory (upstream: alloc_child_tensor, free, copy_to, copy_from) ----
  PyChildBuffer alloc_child_tensor(int worker, const std::vector<uint32_t>& shape, int dtype) {
    node::Orchestrator& o = live("alloc_child_tensor");
    const uint64_t bytes = byte_size(shape, static_cast<DataType>(dtype), "alloc_child_tensor");
    auto addr = [&] {
      pyb::gil_scoped_release nogil;
      return o.malloc(worker, bytes);
    }();
    if (!addr.ok()) throw_status(addr.status().with_context("alloc_child_tensor"));
    auto state = std::make_shared<ChildBufferState>(ChildBufferState{worker, *addr, bytes, false});
    return PyChildBuffer{std::move(state), shape, dtype, st};
  }
  ChildBufferState& live_buffer(const PyChildBuffer& b, const char* op) const {
    if (!same_token(b.node, st))
      throw_error(StatusCode::kInvalidArgument, std::string(op) + ": this chip buffer belongs to another NodeWorker");
    if (b.state->freed) throw_error(StatusCode::kFailedPrecondition, std::string(op) + ": this chip buffer was freed");
    return *b.state;
  }
  void free(const PyChildBuffer& b) {
    node::Orchestrator& o = live("free");
    ChildBufferState& s = live_buffer(b, "free");
    Status r;
    {
      pyb::gil_scoped_release nogil;
      r = o.free(s.chip, s.addr);
    }
    if (!r.ok()) throw_status(r.with_context("free"));
    s.freed = true;
  }
  // Host array `h` <-> chip buffer `b`: `nbytes` bytes from byte offset
  // `h_off` of `h` and `b_off` of `b` (nbytes < 0: the rest of the source).
  void copy(bool to_chip, const PyChildBuffer& b, const pyb::array& h, uint64_t b_off, uint64_t h_off, int64_t nbytes) {
    const char* op = to_chip ? "copy_to" : "copy_from";
    node::Orchestrator& o = live(op);
    ChildBufferState& s = live_buffer(b, op);
    if (!(h.flags() & pyb::array::c_style))
      throw_error(StatusCode::kInvalidArgument, std::string(op) + ": the host array is not C-contiguous");
    if (!to_chip && !h.writeable())
      throw_error(StatusCode::kInvalidArgument, std::string(op) + ": the host array is read-only");
    const uint64_t h_bytes = static_cast<uint64_t>(h.nbytes());
    const uint64_t src_bytes = to_chip ? h_bytes : s.bytes, src_off = to_chip ? h_off : b_off;
    if (src_off > src_bytes)
      throw_error(StatusCode::kOutOfRange, std::string(op) + ": src_offset " + std::to_string(src_off) +
                                               " is past the source's " + std::to_string(src_bytes) + " B");
    const uint64_t n = nbytes < 0 ? src_bytes - src_off : static_cast<uint64_t>(nbytes);
    if (h_off > h_bytes || n > h_bytes - h_off)
      throw_error(StatusCode::kOutOfRange, std::string(op) + ": " + std::to_string(n) + " B at offset " +
                                               std::to_string(h_off) + " leave the host array's " +
                                               std::to_string(h_bytes) + " B");
    if (b_off > s.bytes || n > s.bytes - b_off)
      throw_error(StatusCode::kOutOfRange, std::string(op) + ": " + std::to_string(n) + " B at offset " +
                                               std::to_string(b_off) + " leave the chip buffer's " +
                                               std::to_string(s.bytes) + " B");
    char* host = static_cast<char*>(const_cast<void*>(h.data())) + h_off;
    Status r;
    {
      pyb::gil_scoped_release nogil;
      r = to_chip ? o.copy_to(s.chip, s.addr + b_off, host, n) : o.copy_from(s.chip, host, s.addr + b_off, n);
    }
    if (!r.ok()) throw_status(r);
  }
  void submit_sub_group(int handle, const std::vector<pyb::sequence>& args) {
    node::Orchestrator& o = live("submit_sub_group");
    const int id = id_of(handle, true, "submit_sub_group");
    const ConvertedGroup g = convert_group(args, args_for(-1), nullptr);
    check(o.submit_sub_group(id, g.members));
  }
};

// Ctrl-C while a run is awaited (or while its orchestration function runs):
// the node is closed at once (every child SIGKILLed, NodeWorker::close_now),
// so a SUB that never returns cannot hold the interrupt; the worker is then
// closed, and the caller gets the KeyboardInterrupt.
void close_on_interrupt(NodeState& st) {
  if (st.closed) return;
  Status s;
  {
    pyb::gil_scoped_release nogil;
    s = st.worker->close_now();
  }
  st.closed = s.ok() || st.closed;
}

// How often a waiting run gives Python's signal handlers a chance (they run
// on the main thread only, with the GIL): the bound on Ctrl-C's latency.
constexpr uint64_t kSignalCheckMs = 100;

struct PyNodeRunHandle {
  node::RunHandle h;
  std::shared_ptr<NodeState> st;

  void wait(uint64_t timeout_ms) const {
    const Deadline end = Deadline::after_ms(timeout_ms);
    Status s;
    while (true) {
      {
        pyb::gil_scoped_release nogil;
        s = h.wait(Deadline{std::min(end.at_mono_ns, mono_ns() + kSignalCheckMs * 1'000'000)});
      }
      if (h.done() || end.expired()) break;
      if (PyErr_CheckSignals() != 0) {
        pyb::error_already_set interrupt;  // takes the raised exception
        if (st) close_on_interrupt(*st);
        throw interrupt;
      }
    }
    if (!s.ok()) throw_status(s);
  }
  pyb::dict counts() const {
    const node::RunCounts c = h.counts();
    pyb::dict d;
    d["submitted"] = c.submitted;
    d["completed"] = c.completed;
    d["failed"] = c.failed;
    d["skipped"] = c.skipped;
    return d;
  }
};

class PyNodeWorker {
 public:
  PyNodeWorker(int chips, int sub_workers, const std::string& runtime, uint64_t shared_bytes, uint64_t heap_ring_bytes,
               uint64_t comm_timeout_ms, int domain_cache) {
    st_ = std::make_shared<NodeState>();
    node::NodeConfig& c = st_->config;
    c.chips = chips;
    c.sub_workers = sub_workers;
    c.runtime = runtime;
    c.shared_bytes = shared_bytes;
    c.heap_ring_bytes = heap_ring_bytes;
    c.comm_timeout_ms = comm_timeout_ms;
    c.domain_cache = domain_cache;
    // Every child is a forked copy of this interpreter: bring its state up
    // to date as os.fork() does, before anything else runs there.
    c.child_init = [](node::ChildKind, int) {
      PyOS_AfterFork_Child();
      return Status::Ok();
    };
    st_->worker = std::make_unique<node::NodeWorker>(c);
  }

  int register_chip(const std::shared_ptr<PyCallable>& c) {
    before_init("register");
    for (const auto& [known, handle] : st_->chip_callables)
      if (known == c) return handle;
    auto id = st_->worker->register_chip(c->callable);
    if (!id.ok()) throw_status(id.status());
    const int handle = static_cast<int>(st_->handles.size());
    st_->handles.emplace_back(false, *id);
    st_->chip_callables.emplace_back(c, handle);
    return handle;
  }

  int register_sub(const std::string& name, const pyb::function& fn) {
    before_init("register");
    auto id = st_->worker->register_sub(name, sub_function(fn.ptr(), name));
    if (!id.ok()) throw_status(id.status());
    st_->sub_functions.push_back(fn);
    const int handle = static_cast<int>(st_->handles.size());
    st_->handles.emplace_back(true, *id);
    return handle;
  }

  void init() {
    before_init("init");
    // The GIL stays held across the forks: each child starts as this thread,
    // holding it, which PyOS_AfterFork_Child requires.
    PyOS_BeforeFork();
    Status s = st_->worker->init();
    PyOS_AfterFork_Parent();
    if (!s.ok()) {
      st_->closed = true;  // a failed init rolled its children back; the worker is spent
      throw_status(s);
    }
    st_->initialised = true;
  }

  pyb::array shared_array(const std::vector<uint32_t>& shape, int dtype) {
    running("shared_array");
    const auto t = static_cast<DataType>(dtype);
    const uint64_t bytes = byte_size(shape, t, "shared_array");
    auto p = st_->worker->alloc_shared(bytes);
    if (!p.ok()) throw_status(p.status());
    std::memset(*p, 0, bytes);
    std::vector<pyb::ssize_t> dims(shape.begin(), shape.end());
    // The array keeps the node's state, so the heap stays mapped under it.
    auto* keep = new std::shared_ptr<NodeState>(st_);
    pyb::capsule base(keep, [](void* k) { delete static_cast<std::shared_ptr<NodeState>*>(k); });
    return pyb::array(numpy_dtype_of(t), dims, *p, base);
  }

  // `caller_waits`: the Python caller waits for the handle at once (run()).
  PyNodeRunHandle submit(const pyb::function& orch_fn, bool caller_waits) {
    running("submit");
    auto orch = std::make_shared<PyNodeOrchestrator>();
    orch->st = st_;
    pyb::object handle_obj = pyb::cast(orch);
    std::optional<pyb::error_already_set> raised;
    node::RunHandle h = st_->worker->submit(
        [&](node::Orchestrator& o) -> Status {
          orch->o = &o;
          Status s;
          try {
            orch_fn(handle_obj);
          } catch (pyb::error_already_set& e) {
            s = aborted(std::string("the orchestration function raised ") + e.what());
            raised.emplace(std::move(e));
          }
          orch->o = nullptr;
          return s;
        },
        node::SubmitOptions{.caller_waits = caller_waits});
    if (raised) {
      if (raised->matches(PyExc_KeyboardInterrupt)) {
        close_on_interrupt(*st_);
        throw std::move(*raised);
      }
      // Its unstarted tasks are cancelled; once the started ones end, the
      // caller gets the exception the function raised, and the worker stays
      // usable.
      {
        pyb::gil_scoped_release nogil;
        (void)h.wait(Deadline::after_ms(st_->config.close_timeout_ms));
      }
      throw std::move(*raised);
    }
    return PyNodeRunHandle{std::move(h), st_};
  }

  void close() {
    if (st_->closed) return;
    Status s;
    {
      pyb::gil_scoped_release nogil;
      s = st_->worker->close();
    }
    if (!s.ok()) throw_status(s);
    st_->closed = true;
  }

  bool closed() const { return st_->closed; }
  bool initialised() const { return st_->initialised && !st_->closed; }
  int chips() const { return st_->config.chips; }
  int sub_workers() const { return st_->config.sub_workers; }
  std::vector<int> pids() const {
    std::vector<int> p;
    if (!initialised()) return p;
    for (int i = 0; i < st_->config.chips; ++i) p.push_back(st_->worker->chip_pid(i));
    for (int i = 0; i < st_->config.sub_workers; ++i) p.push_back(st_->worker->sub_pid(i));
    return p;
  }

 private:
  void before_init(const char* op) const {
    if (st_->closed) throw_error(StatusCode::kFailedPrecondition, std::string(op) + ": the worker is closed");
    if (st_->initialised)
      throw_error(StatusCode::kFailedPrecondition,
                  std::string(op) + ": the worker is initialised; register every callable before init()");
  }
  void running(const char* op) const {
    if (st_->closed) throw_error(StatusCode::kFailedPrecondition, std::string(op) + ": the worker is closed");
    if (!st_->initialised) throw_error(StatusCode::kFailedPrecondition, std::string(op) + ": call init() first");
  }

  std::shared_ptr<NodeState> st_;
};

}  // namespace

void bind_node(pyb::module_& m) {
  pyb::class_<PyNodeOrchestrator, std::shared_ptr<PyNodeOrchestrator>>(m, "_NodeOrchestrator")
      // Upstream's signatures: submit_next_level(handle, args, config=None, *, worker), ...
      .def("submit_next_level", &PyNodeOrchestrator::submit_next_level, pyb::arg("handle"), pyb::arg("args"),
           pyb::arg("config") = pyb::none(), pyb::kw_only(), pyb::arg("worker"))
      .def("submit_next_level_group", &PyNodeOrchestrator::submit_next_level_group, pyb::arg("handle"),
           pyb::arg("args_list"), pyb::arg("config") = pyb::none(), pyb::kw_only(), pyb::arg("workers"))
      .def("submit_sub", &PyNodeOrchestrator::submit_sub, pyb::arg("handle"), pyb::arg("args") = pyb::none())
      .def("submit_sub_group", &PyNodeOrchestrator::submit_sub_group, pyb::arg("handle"), pyb::arg("args_list"))
      .def("scope_begin", [](PyNodeOrchestrator& o) { PyNodeOrchestrator::check(o.live("scope_begin").scope_begin()); })
      .def("scope_end", [](PyNodeOrchestrator& o) { PyNodeOrchestrator::check(o.live("scope_end").scope_end()); })
      // Comm domains and collectives: taskring/comm.py gives them upstream's shape.
      .def(
          "_allocate_domain",
          [](PyNodeOrchestrator& o, const std::string& name, const std::vector<int>& workers, uint64_t window_size,
             const std::vector<std::pair<std::string, uint64_t>>& buffers) {
            return allocate_domain(o.live("allocate_domain"), name, workers, window_size, buffers);
          },
          pyb::arg("name"), pyb::arg("workers"), pyb::arg("window_size"), pyb::arg("buffers"))
      .def(
          "_collective",
          [](PyNodeOrchestrator& o, const std::string& op, int comm, const PyCommDomain& d, pyb::handle ins,
             pyb::handle outs, int dtype, const std::string& algo, int root, const std::string& scratch) {
            node::Orchestrator& live = o.live(op.c_str());
            submit_collective(live, o.id_of(comm, false, op.c_str()), d, op, ins, outs, dtype, algo, root, scratch,
                              o.st);
          },
          pyb::arg("op"), pyb::arg("comm"), pyb::arg("domain"), pyb::arg("ins"), pyb::arg("outs"), pyb::arg("dtype"),
          pyb::arg("algo"), pyb::arg("root"), pyb::arg("scratch"))
      .def("_alloc", &PyNodeOrchestrator::alloc, pyb::arg("shape"), pyb::arg("dtype"))
      .def("_alloc_child_tensor", &PyNodeOrchestrator::alloc_child_tensor, pyb::arg("worker"), pyb::arg("shape"),
           pyb::arg("dtype"))
      .def("_free", &PyNodeOrchestrator::free, pyb::arg("buffer"))
      .def("_copy", &PyNodeOrchestrator::copy, pyb::arg("to_chip"), pyb::arg("buffer"), pyb::arg("host"),
           pyb::arg("buffer_offset"), pyb::arg("host_offset"), pyb::arg("nbytes"))
      .def_property_readonly("chips", [](PyNodeOrchestrator& o) { return o.st->config.chips; })
      .def_property_readonly("sub_workers", [](PyNodeOrchestrator& o) { return o.st->config.sub_workers; });
  pyb::class_<PyHeapTensor>(m, "_HeapTensor")
      .def_property_readonly("shape",
                             [](const PyHeapTensor& h) {
                               pyb::tuple t(h.tensor.ndims);
                               for (uint32_t d = 0; d < h.tensor.ndims; ++d) t[d] = h.tensor.shapes[d];
                               return t;
                             })
      .def_property_readonly("dtype", [](const PyHeapTensor& h) { return static_cast<int>(h.tensor.dtype); })
      .def_property_readonly("nbytes", [](const PyHeapTensor& h) { return h.tensor.extent_bytes(); })
      .def("__repr__", [](const PyHeapTensor& h) { return "HeapTensor(" + h.tensor.describe() + ")"; });
  pyb::class_<PyChildBuffer>(m, "_ChildBuffer")
      .def_property_readonly("worker_id", [](const PyChildBuffer& b) { return b.state->chip; })
      .def_property_readonly("nbytes", [](const PyChildBuffer& b) { return b.state->bytes; })
      .def_property_readonly("shape",
                             [](const PyChildBuffer& b) {
                               pyb::tuple t(b.shape.size());
                               for (size_t d = 0; d < b.shape.size(); ++d) t[d] = b.shape[d];
                               return t;
                             })
      .def_property_readonly("dtype", [](const PyChildBuffer& b) { return b.dtype; })
      .def_property_readonly("freed", [](const PyChildBuffer& b) { return b.state->freed; })
      .def("__repr__", [](const PyChildBuffer& b) {
        std::string dims;
        for (uint32_t d : b.shape) dims += (dims.empty() ? "" : "x") + std::to_string(d);
        return "ChildBuffer(chip " + std::to_string(b.state->chip) + ", " +
               std::string(data_type_name(static_cast<DataType>(b.dtype))) + "[" + dims + "], " +
               std::to_string(b.state->bytes) + " B" + (b.state->freed ? ", freed)" : ")");
      });
  pyb::class_<PyNodeRunHandle>(m, "_NodeRunHandle")
      .def("wait", &PyNodeRunHandle::wait, pyb::arg("timeout_ms"))
      .def_property_readonly("done", [](const PyNodeRunHandle& r) { return r.h.done(); })
      .def("counts", &PyNodeRunHandle::counts);
  pyb::class_<PyNodeWorker>(m, "_NodeWorker")
      .def(pyb::init<int, int, const std::string&, uint64_t, uint64_t, uint64_t, int>(), pyb::arg("chips"),
           pyb::arg("sub_workers"), pyb::arg("runtime"), pyb::arg("shared_bytes"), pyb::arg("heap_ring_bytes"),
           pyb::arg("comm_timeout_ms"), pyb::arg("domain_cache"))
      .def("register_chip", &PyNodeWorker::register_chip, pyb::arg("callable"))
      .def("register_sub", &PyNodeWorker::register_sub, pyb::arg("name"), pyb::arg("fn"))
      .def("init", &PyNodeWorker::init)
      .def("shared_array", &PyNodeWorker::shared_array, pyb::arg("shape"), pyb::arg("dtype"))
      .def("submit", &PyNodeWorker::submit, pyb::arg("orch_fn"), pyb::arg("caller_waits") = false)
      .def("close", &PyNodeWorker::close)
      .def_property_readonly("closed", &PyNodeWorker::closed)
      .def_property_readonly("initialised", &PyNodeWorker::initialised)
      .def_property_readonly("chips", &PyNodeWorker::chips)
      .def_property_readonly("sub_workers", &PyNodeWorker::sub_workers)
      .def("pids", &PyNodeWorker::pids);
}

}  // namespace taskring::py
