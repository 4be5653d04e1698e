#include "node_comm.hpp"

#include <pybind11/stl.h>

#include <span>

#include "arrays.hpp"
#include "errors.hpp"
#include "run_args.hpp"
#include "taskring/kernels/comm_kernels.hpp"
#include "taskring/node/collectives.hpp"

namespace taskring::py {

namespace pyb = pybind11;

namespace {

using kernels::AllreduceAlgo;
using kernels::CollectiveOp;

void check(const Status& s) {
  if (!s.ok()) throw_status(s);
}

AllreduceAlgo algo_of(const std::string& algo, const char* op) {
  if (algo == "one_phase") return AllreduceAlgo::kOnePhase;
  if (algo == "ring") return AllreduceAlgo::kRing;
  if (algo == "direct") return AllreduceAlgo::kDirect;
  if (algo == "auto") return AllreduceAlgo::kAuto;
  throw_error(StatusCode::kInvalidArgument,
              std::string(op) + ": algo '" + algo + "' is not one of 'one_phase', 'ring', 'direct', 'auto'");
}

// The scratch layout a collective needs (auto allreduce picks one-phase or
// direct, which need the same).
CollectiveOp collective_op(const std::string& op, const std::string& algo) {
  if (op == "allreduce") {
    switch (algo_of(algo, "collective_scratch_bytes")) {
      case AllreduceAlgo::kOnePhase: return CollectiveOp::kAllreduceOnePhase;
      case AllreduceAlgo::kRing: return CollectiveOp::kAllreduceRing;
      default: return CollectiveOp::kAllreduceDirect;
    }
  }
  if (op == "allgather") return CollectiveOp::kAllgather;
  if (op == "reduce_scatter") return CollectiveOp::kReduceScatter;
  if (op == "broadcast") return CollectiveOp::kBroadcast;
  if (op == "all_to_all") return CollectiveOp::kAllToAll;
  throw_error(StatusCode::kInvalidArgument, "collective '" + op +
                                                "' is not one of allreduce, allgather, reduce_scatter, broadcast, "
                                                "all_to_all");
}

// The per-rank list `items` of `op` ("inputs", "outputs", "buffers"): a list
// or a tuple. A numpy array is refused, not read as one rank per element.
PyObject* rank_list(pyb::handle items, const std::string& op, const char* which) {
  if (!PyList_Check(items.ptr()) && !PyTuple_Check(items.ptr()))
    throw_error(StatusCode::kInvalidArgument,
                op + ": " + which + " must be a list with one array or ChildBuffer per rank");
  return items.ptr();
}

// Whether `h` is a chip buffer: its exact type first (pybind11's isinstance
// looks the bound type up in a hash map on every call, ~1.2k instructions,
// four times per collective over chip buffers), then a subclass.
bool is_child_buffer(pyb::handle h) {
  // The bound class lives as long as the module: looked up once (a
  // function-local constant, not mutable state).
  static PyTypeObject* const exact = reinterpret_cast<PyTypeObject*>(pyb::type::of<PyChildBuffer>().ptr());
  return Py_TYPE(h.ptr()) == exact || pyb::isinstance<PyChildBuffer>(h);
}

// Appends rank i's tensor of `list` for every rank i: a shared array, or a
// chip buffer on chips[i]. The array test comes first: it is numpy's own
// type check, where pybind11's test for a bound class looks the type up by
// name (a fifth of a collective's submit when it came first, callgrind).
// Returns how many it appended.
size_t append_tensors(std::vector<ChipTensor>& out, pyb::handle list, int dtype, bool writable, const std::string& op,
                      const char* which, const std::vector<int>& chips, const std::shared_ptr<void>& node) {
  PyObject* seq = rank_list(list, op, which);
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  PyObject** items = PySequence_Fast_ITEMS(seq);
  for (Py_ssize_t k = 0; k < n; ++k) {
    const auto i = static_cast<size_t>(k);
    const pyb::handle item(items[k]);
    const ArgName what(op, which, i);
    ViewSpec view;
    if (dtype >= 0) view.dtype = static_cast<DataType>(dtype);
    if (pyb::isinstance<pyb::array>(item)) {
      out.push_back(host_tensor(pyb::reinterpret_borrow<pyb::array>(item), view, writable, what));
    } else if (is_child_buffer(item)) {
      const auto& b = item.cast<const PyChildBuffer&>();
      if (!view.dtype) view.dtype = static_cast<DataType>(b.dtype);
      view.shape = b.shape;
      const NodeArgContext ctx{nullptr, node, i < chips.size() ? chips[i] : -1};
      out.push_back(child_tensor(b, view, &ctx, what));
    } else {
      throw_error(StatusCode::kInvalidArgument,
                  what + ": expected a shared array or a ChildBuffer, got " + Py_TYPE(item.ptr())->tp_name);
    }
  }
  return static_cast<size_t>(n);
}

pyb::dict member_dict(const node::DomainMember& m) {
  pyb::dict d;
  d["chip"] = m.chip;
  d["rank"] = m.rank;
  d["size"] = m.size;
  d["device_ctx"] = m.device_ctx;
  d["window_base"] = m.window_base;
  d["window_size"] = m.window_size;
  return d;
}

}  // namespace

PyCommDomain allocate_domain(node::Orchestrator& o, const std::string& name, const std::vector<int>& workers,
                             uint64_t window_size, const std::vector<std::pair<std::string, uint64_t>>& buffers) {
  std::vector<node::DomainBufferSpec> specs;
  specs.reserve(buffers.size());
  for (const auto& [n, bytes] : buffers) specs.push_back({n, bytes});
  // Every member maps and zeroes its window and meets the others; the
  // children never need this interpreter, so let its other threads run.
  auto d = [&] {
    pyb::gil_scoped_release nogil;
    return o.allocate_domain(name, workers, window_size, specs);
  }();
  if (!d.ok()) throw_status(d.status());
  return PyCommDomain{std::move(*d)};
}

void submit_collective(node::Orchestrator& o, int comm_call, const PyCommDomain& d, const std::string& op,
                       pyb::handle ins, pyb::handle outs, int dtype, const std::string& algo, int root,
                       const std::string& scratch, const std::shared_ptr<void>& node) {
  const node::CommDomain& dom = *d.d;
  if (dom.released())
    throw_error(StatusCode::kFailedPrecondition,
                op + ": domain '" + dom.name() + "' was released; allocate a new one to submit more collectives");
  const std::vector<int> chips = dom.chips();
  std::vector<ChipTensor> all;  // inputs then outputs, one allocation
  all.reserve(2 * chips.size());
  if (op == "broadcast") {
    append_tensors(all, ins, dtype, true, op, "buffers", chips, node);
    check(node::submit_broadcast(o, comm_call, dom, all, root, scratch));
    return;
  }
  const size_t n_in = append_tensors(all, ins, dtype, false, op, "inputs", chips, node);
  append_tensors(all, outs, dtype, true, op, "outputs", chips, node);
  const std::span<const ChipTensor> in(all.data(), n_in), out(all.data() + n_in, all.size() - n_in);
  if (op == "allreduce") {
    check(node::submit_allreduce(o, comm_call, dom, in, out, algo_of(algo, "allreduce"), scratch));
  } else if (op == "allgather") {
    check(node::submit_allgather(o, comm_call, dom, in, out, scratch));
  } else if (op == "reduce_scatter") {
    check(node::submit_reduce_scatter(o, comm_call, dom, in, out, scratch));
  } else if (op == "all_to_all") {
    check(node::submit_all_to_all(o, comm_call, dom, in, out, scratch));
  } else {
    (void)collective_op(op, algo);  // raises, naming the known ones
  }
}

void bind_comm(pyb::module_& m) {
  pyb::class_<PyCommDomain>(m, "_CommDomain")
      .def_property_readonly("name", [](const PyCommDomain& d) { return d.d->name(); })
      .def_property_readonly("size", [](const PyCommDomain& d) { return d.d->size(); })
      .def_property_readonly("window_size", [](const PyCommDomain& d) { return d.d->window_size(); })
      .def_property_readonly("chips", [](const PyCommDomain& d) { return d.d->chips(); })
      .def_property_readonly("released", [](const PyCommDomain& d) { return d.d->released(); })
      .def_property_readonly("swept", [](const PyCommDomain& d) { return d.d->swept(); })
      .def(
          "member",
          [](const PyCommDomain& d, int chip) {
            auto m = d.d->member(chip);
            if (!m.ok()) throw_status(m.status());
            return member_dict(*m);
          },
          pyb::arg("chip"))
      .def(
          "buffer_offset",
          [](const PyCommDomain& d, const std::string& name) {
            auto off = d.d->buffer_offset(name);
            if (!off.ok()) throw_status(off.status());
            return *off;
          },
          pyb::arg("name"))
      .def("release", [](PyCommDomain& d) { d.d->release(); });
  m.def(
      "_collective_scratch_bytes",
      [](const std::string& op, uint64_t elems, uint64_t elem_size, int ranks, const std::string& algo) {
        return kernels::collective_scratch_bytes(collective_op(op, algo), elems, elem_size, ranks);
      },
      pyb::arg("op"), pyb::arg("elems"), pyb::arg("elem_size"), pyb::arg("ranks"), pyb::arg("algo"));
}

}  // namespace taskring::py
