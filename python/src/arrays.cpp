#include "arrays.hpp"

#include <cstring>
#include <limits>

#include "errors.hpp"

namespace taskring::py {

namespace pyb = pybind11;

std::string ArgName::str() const {
  std::string s(head_);
  if (!list_.empty()) s.append(": ").append(list_).append("[").append(std::to_string(index_)).append("]");
  return s;
}

std::optional<DataType> data_type_of(const pyb::dtype& dt) {
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  const char order = dt.byteorder();
  if (order == '>') return std::nullopt;  // taskring data is little-endian
  switch (kind) {
    case 'f':
      if (size == 4) return DataType::FLOAT32;
      if (size == 2) return DataType::FLOAT16;
      return std::nullopt;
    case 'i':
      if (size == 1) return DataType::INT8;
      if (size == 2) return DataType::INT16;
      if (size == 4) return DataType::INT32;
      if (size == 8) return DataType::INT64;
      return std::nullopt;
    case 'u':
      if (size == 1) return DataType::UINT8;
      if (size == 2) return DataType::UINT16;
      if (size == 4) return DataType::UINT32;
      if (size == 8) return DataType::UINT64;
      return std::nullopt;
    case 'b': return size == 1 ? std::optional<DataType>(DataType::BOOL) : std::nullopt;
    case 'V':
      // ml_dtypes registers bfloat16 as a void-kind type named "bfloat16".
      if (size == 2 &&
          pyb::str(pyb::handle(reinterpret_cast<PyObject*>(dt.ptr())).attr("name")).cast<std::string>() == "bfloat16") {
        return DataType::BFLOAT16;
      }
      return std::nullopt;
    default: return std::nullopt;
  }
}

pyb::dtype numpy_dtype_of(DataType t) {
  switch (t) {
    case DataType::FLOAT32: return pyb::dtype("float32");
    case DataType::FLOAT16: return pyb::dtype("float16");
    case DataType::INT32: return pyb::dtype("int32");
    case DataType::INT16: return pyb::dtype("int16");
    case DataType::INT8: return pyb::dtype("int8");
    case DataType::UINT8: return pyb::dtype("uint8");
    case DataType::BFLOAT16: return pyb::dtype("uint16");
    case DataType::INT64: return pyb::dtype("int64");
    case DataType::UINT64: return pyb::dtype("uint64");
    case DataType::UINT16: return pyb::dtype("uint16");
    case DataType::UINT32: return pyb::dtype("uint32");
    case DataType::BOOL: return pyb::dtype("bool");
  }
  throw_error(StatusCode::kInvalidArgument, "data type " + std::to_string(static_cast<int>(t)) + " outside the enum");
}

namespace {

std::string dtype_str(const pyb::dtype& dt) { return pyb::str(pyb::handle(dt)).cast<std::string>(); }

// Checked, row-major strides of `shape`.
std::vector<uint32_t> row_major(const std::vector<uint32_t>& shape, const ArgName& what) {
  std::vector<uint32_t> strides(shape.size());
  uint64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (s > std::numeric_limits<uint32_t>::max()) {
      throw_error(StatusCode::kOutOfRange,
                  what + ": row-major stride of dimension " + std::to_string(i) + " does not fit 32 bits");
    }
    strides[i] = static_cast<uint32_t>(s);
    s *= std::max<uint32_t>(shape[i], 1);
  }
  return strides;
}

void check_rank(size_t ndim, const ArgName& what) {
  if (ndim < 1 || ndim > MAX_TENSOR_DIMS) {
    throw_error(StatusCode::kInvalidArgument,
                what + ": " + std::to_string(ndim) + " dimensions; taskring tensors have 1 to 5 (reshape the array)");
  }
}

ChipTensor build(uint64_t addr, uint64_t size, const std::vector<uint32_t>& shape, const ViewSpec& view, DataType dt,
                 AddressSpace space, const ArgName& what) {
  check_rank(shape.size(), what);
  if (view.strides && view.strides->size() != shape.size()) {
    throw_error(StatusCode::kInvalidArgument, what + ": " + std::to_string(view.strides->size()) + " strides for " +
                                                  std::to_string(shape.size()) + " dimensions");
  }
  std::vector<uint32_t> strides = view.strides ? *view.strides : row_major(shape, what);
  auto t = try_make_tensor_strided(addr, size, shape, strides, view.offset, dt, false, 0, space);
  if (!t.ok()) throw_status(t.status().with_context(what.str()));
  return *t;
}

}  // namespace

ChipTensor host_tensor(const pyb::array& a, const ViewSpec& view, bool writable, const ArgName& what) {
  const pyb::dtype adt = a.dtype();
  std::optional<DataType> own = data_type_of(adt);
  DataType dt;
  if (view.dtype) {
    dt = *view.dtype;
    if (!is_valid_data_type(dt)) throw_error(StatusCode::kInvalidArgument, what + ": dtype outside the enum");
    if (element_size(dt) != static_cast<size_t>(adt.itemsize())) {
      throw_error(StatusCode::kInvalidArgument,
                  what + ": dtype " + std::string(data_type_name(dt)) + " (" + std::to_string(element_size(dt)) +
                      " B) cannot view a " + dtype_str(adt) + " array (" + std::to_string(adt.itemsize()) + " B)");
    }
  } else if (own) {
    dt = *own;
  } else {
    throw_error(StatusCode::kInvalidArgument,
                what + ": numpy dtype " + dtype_str(adt) +
                    " has no taskring type (float32, float16, int8/16/32/64, uint8/16/32/64, bool; bfloat16 as a "
                    "uint16 array with dtype=taskring.BFLOAT16)");
  }
  if (!(a.flags() & pyb::array::c_style)) {
    throw_error(StatusCode::kInvalidArgument,
                what +
                    ": array is not C-contiguous; pass numpy.ascontiguousarray(a), or describe a strided view "
                    "with taskring.Tensor(a, tag, shape=..., strides=...)");
  }
  if (writable && !a.writeable()) {
    throw_error(StatusCode::kInvalidArgument, what + ": array is read-only but the run writes it");
  }
  const uint64_t addr = reinterpret_cast<uintptr_t>(a.data());
  const uint64_t size = static_cast<uint64_t>(a.nbytes());
  if (view.shape) return build(addr, size, *view.shape, view, dt, AddressSpace::HOST, what);
  if (view.strides || view.offset != 0) {
    throw_error(StatusCode::kInvalidArgument, what + ": strides or offset need an explicit shape");
  }
  check_rank(static_cast<size_t>(a.ndim()), what);
  std::vector<uint32_t> shape(static_cast<size_t>(a.ndim()));
  for (size_t i = 0; i < shape.size(); ++i) {
    const auto n = a.shape(static_cast<pyb::ssize_t>(i));
    if (n == 0 || static_cast<uint64_t>(n) > std::numeric_limits<uint32_t>::max()) {
      throw_error(StatusCode::kInvalidArgument, what + ": dimension " + std::to_string(i) + " has " +
                                                    std::to_string(n) + " elements (need 1 .. 2^32-1)");
    }
    shape[i] = static_cast<uint32_t>(n);
  }
  auto t = try_make_tensor(addr, size, shape, dt, false, 0, AddressSpace::HOST);
  if (!t.ok()) throw_status(t.status().with_context(what.str()));
  return *t;
}

ChipTensor device_tensor(uint64_t addr, uint64_t size, const ViewSpec& view, const ArgName& what) {
  if (!view.shape) throw_error(StatusCode::kInvalidArgument, what + ": a device buffer needs shape=");
  const DataType dt = view.dtype.value_or(DataType::FLOAT32);
  if (!is_valid_data_type(dt)) throw_error(StatusCode::kInvalidArgument, what + ": dtype outside the enum");
  return build(addr, size, *view.shape, view, dt, AddressSpace::DEVICE, what);
}

void bind_arrays(pyb::module_& m) {
  m.def("_data_type_of", [](const pyb::dtype& dt) -> pyb::object {
    auto t = data_type_of(dt);
    return t ? pyb::object(pyb::int_(static_cast<int>(*t))) : pyb::object(pyb::none());
  });
  m.def("_numpy_dtype_of", [](int t) { return numpy_dtype_of(static_cast<DataType>(t)); });
  m.def("_data_type_name", [](int t) { return std::string(data_type_name(static_cast<DataType>(t))); });
  m.def("_element_size", [](int t) { return element_size(static_cast<DataType>(t)); });
  m.def("_parse_data_type", [](const std::string& name) -> pyb::object {
    auto t = parse_data_type(name);
    return t ? pyb::object(pyb::int_(static_cast<int>(*t))) : pyb::object(pyb::none());
  });
}

}  // namespace taskring::py
