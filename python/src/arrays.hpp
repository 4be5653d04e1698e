// numpy arrays <-> taskring tensors: the dtype mapping and the checks that
// turn every Python-side misuse (wrong dtype, non-contiguous, read-only
// output, view outside the array) into an exception instead of a wild pointer.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::py {

// The taskring DataType of a numpy dtype, or nullopt when it has none.
// float32/float16/int8..int64/uint8..uint64/bool map one to one; an
// ml_dtypes-style "bfloat16" dtype maps to BFLOAT16.
std::optional<DataType> data_type_of(const pybind11::dtype& dt);

// The numpy dtype that holds `t`'s elements (BFLOAT16: uint16, its bit pattern).
pybind11::dtype numpy_dtype_of(DataType t);

// The name of an argument in error messages ("argument 3", "allreduce:
// inputs[1]"), composed only when an error is raised: a collective names
// four arguments and raises for none, and composing four strings per call
// was a twentieth of its submit (callgrind). Holds views: the strings it was
// made from must outlive it (it lives for one call).
class ArgName {
 public:
  ArgName(const std::string& whole) : head_(whole) {}  // NOLINT(google-explicit-constructor): every `what` string
  // "<head>: <list>[<index>]"
  ArgName(std::string_view head, std::string_view list, size_t index) : head_(head), list_(list), index_(index) {}
  std::string str() const;
  friend std::string operator+(const ArgName& n, std::string_view tail) { return n.str().append(tail); }

 private:
  std::string_view head_, list_;
  size_t index_ = 0;
};

// A view description: everything optional except the array.
struct ViewSpec {
  std::optional<DataType> dtype;  // reinterpret the elements (same itemsize)
  std::optional<std::vector<uint32_t>> shape;
  std::optional<std::vector<uint32_t>> strides;  // elements; default row-major of shape
  uint64_t offset = 0;                           // elements from the array's first byte
};

// A HOST ChipTensor over `a`'s memory. `what` names the argument in errors;
// `writable` demands a writable array (outputs). Raises taskring errors.
ChipTensor host_tensor(const pybind11::array& a, const ViewSpec& view, bool writable, const ArgName& what);

// A DEVICE ChipTensor over [addr, addr+size). Raises taskring errors.
ChipTensor device_tensor(uint64_t addr, uint64_t size, const ViewSpec& view, const ArgName& what);

void bind_arrays(pybind11::module_& m);

}  // namespace taskring::py
