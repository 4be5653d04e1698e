#include "run_args.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <string>

#include "arrays.hpp"
#include "errors.hpp"

namespace taskring::py {

namespace pyb = pybind11;

namespace {

TensorArgType tag_of(const pyb::handle& h, const std::string& what) {
  long v = PyLong_AsLong(h.ptr());
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    throw_error(StatusCode::kInvalidArgument, what +
                                                  ": the tag must be taskring.INPUT, OUTPUT, INOUT, "
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

bool writes(TensorArgType t) { return t == TensorArgType::INOUT || t == TensorArgType::OUTPUT_EXISTING; }

void add_tensor(WorkerState& st, ChipTaskArgs& cargs, const ChipTensor& t, TensorArgType tag) {
  const int i = cargs.tensor_count();
  if (i >= ChipTaskArgs::kTensorCapacity) {
    throw_error(StatusCode::kInvalidArgument,
                "run: more than " + std::to_string(ChipTaskArgs::kTensorCapacity) + " tensor arguments");
  }
  st.tensors[static_cast<size_t>(i)] = t;
  cargs.add_tensor(st.tensors[static_cast<size_t>(i)], tag);
}

void add_int_scalar(ChipTaskArgs& cargs, PyObject* p, size_t i) {
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
void add_numpy_scalar(ChipTaskArgs& cargs, const pyb::object& a, size_t i) {
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
                                                  pyb::str(pyb::handle(dt)).cast<std::string>() +
                                                  " is not a taskring scalar");
  }
}

// Why the first element of an (x, tag) pair is not a tensor: what the user
// passed, and what to pass instead.
std::string describe_bad_array(PyObject* x) {
  const std::string type = Py_TYPE(x)->tp_name;
  if (PyList_Check(x) || PyTuple_Check(x)) {
    return "(array, tag) holds a Python " + type + ", not a numpy array; pass (numpy.asarray(values, dtype=...), tag)";
  }
  if (PyMemoryView_Check(x) || PyByteArray_Check(x) || PyBytes_Check(x)) {
    return "(array, tag) holds a " + type + ", not a numpy array; pass (numpy.frombuffer(buffer, dtype=...), tag) " +
           "for a numpy array over the same memory";
  }
  if (PyObject_HasAttrString(x, "dtype") && PyObject_HasAttrString(x, "item")) {
    return "(array, tag) holds a numpy scalar (" + type + ", 0-d); a tensor needs an array of at least one " +
           "dimension: pass (numpy.atleast_1d(x), tag), or pass the number alone as a scalar argument";
  }
  return "(array, tag) holds a value of type " + type +
         "; expected a numpy array, a chip buffer or an Orchestrator.alloc tensor";
}

}  // namespace

ChipTensor child_tensor(const PyChildBuffer& b, const ViewSpec& view, const NodeArgContext* node, const ArgName& what) {
  if (node == nullptr)
    throw_error(StatusCode::kInvalidArgument, what +
                                                  ": a chip buffer (alloc_child_tensor) is an argument of node "
                                                  "tasks only");
  if (!same_token(b.node, node->node))
    throw_error(StatusCode::kInvalidArgument, what + ": this chip buffer belongs to another NodeWorker");
  const ChildBufferState& s = *b.state;
  if (s.freed) throw_error(StatusCode::kFailedPrecondition, what + ": this chip buffer was freed");
  if (node->chip < 0)
    throw_error(StatusCode::kInvalidArgument,
                what + ": a chip buffer (of chip " + std::to_string(s.chip) + "); SUB workers take host tensors only");
  if (s.chip != node->chip)
    throw_error(StatusCode::kInvalidArgument, what + ": a buffer of chip " + std::to_string(s.chip) +
                                                  ", but the task runs on chip " + std::to_string(node->chip) +
                                                  "; each chip reaches only its own memory");
  return device_tensor(s.addr, s.bytes, view, what);
}

void bind_run_args(WorkerState& st, const pyb::sequence& args, ChipTaskArgs& cargs, std::vector<pyb::object>& keep,
                   const NodeArgContext* node) {
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
    } else if (PyTuple_Check(p) && PyTuple_GET_SIZE(p) == 2 && pyb::isinstance<PyHeapTensor>(PyTuple_GET_ITEM(p, 0))) {
      const std::string what = "argument " + std::to_string(i);
      const TensorArgType tag = tag_of(PyTuple_GET_ITEM(p, 1), what);
      const auto& h = pyb::handle(PyTuple_GET_ITEM(p, 0)).cast<const PyHeapTensor&>();
      if (node == nullptr)
        throw_error(StatusCode::kInvalidArgument,
                    what + ": a tensor from Orchestrator.alloc is an argument of node tasks only");
      if (!same_token(h.run, node->run))
        throw_error(StatusCode::kFailedPrecondition,
                    what +
                        ": this tensor was allocated by another run's Orchestrator.alloc; its memory went back "
                        "to the heap ring when that run's consumers finished. Allocate it in this run");
      add_tensor(st, cargs, h.tensor, tag);
    } else if (PyTuple_Check(p) && PyTuple_GET_SIZE(p) == 2 && pyb::isinstance<PyChildBuffer>(PyTuple_GET_ITEM(p, 0))) {
      const std::string what = "argument " + std::to_string(i);
      const TensorArgType tag = tag_of(PyTuple_GET_ITEM(p, 1), what);
      const auto& b = pyb::handle(PyTuple_GET_ITEM(p, 0)).cast<const PyChildBuffer&>();
      ViewSpec v;
      v.dtype = static_cast<DataType>(b.dtype);
      v.shape = b.shape;
      add_tensor(st, cargs, child_tensor(b, v, node, what), tag);
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
        const BufferState& b = check_buffer(st, t.data.cast<const PyDeviceBuffer&>(), what);
        add_tensor(st, cargs, device_tensor(b.addr, b.size, v, what), tag);
      } else if (pyb::isinstance<PyChildBuffer>(t.data)) {
        add_tensor(st, cargs, child_tensor(t.data.cast<const PyChildBuffer&>(), v, node, what), tag);
      } else if (pyb::isinstance<pyb::array>(t.data)) {
        add_tensor(st, cargs, host_tensor(pyb::reinterpret_borrow<pyb::array>(t.data), v, writes(tag), what), tag);
      } else {
        throw_error(StatusCode::kInvalidArgument,
                    what + ": Tensor data must be a numpy array, a DeviceBuffer or a chip buffer (ChildBuffer)");
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
    } else if (PyTuple_Check(p) && PyTuple_GET_SIZE(p) == 2) {
      throw_error(StatusCode::kInvalidArgument,
                  "argument " + std::to_string(i) + ": " + describe_bad_array(PyTuple_GET_ITEM(p, 0)));
    } else {
      throw_error(StatusCode::kInvalidArgument, "argument " + std::to_string(i) +
                                                    ": expected (array, tag), taskring.Tensor(...) or a number, got " +
                                                    std::string(Py_TYPE(p)->tp_name));
    }
    if (cargs.has_error()) {
      throw_error(StatusCode::kInvalidArgument, "argument " + std::to_string(i) + ": " + cargs.error_msg());
    }
    if (cargs.tensor_count() != tensors_before) keep.push_back(std::move(a));
  }
}

}  // namespace taskring::py
