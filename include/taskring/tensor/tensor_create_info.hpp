// TensorCreateInfo: what a task asks the runtime to allocate for an OUTPUT.
//
// The runtime allocates numel·elem_size bytes (rounded up to 1024 in the heap
// ring) and, if an initial value is set, fills every element with it before
// the task runs.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <type_traits>

#include "taskring/base/status.hpp"
#include "taskring/tensor/chip_tensor.hpp"

namespace taskring {

struct TensorCreateInfo {
  uint32_t shapes[MAX_TENSOR_DIMS] = {};
  uint32_t ndims = 0;
  DataType dtype = DataType::FLOAT32;
  bool manual_dep = false;
  bool has_initial_value = false;
  uint8_t pad_ = 0;
  uint64_t initial_value_bits = 0;  // element bit pattern, low elem_size bytes used
  uint8_t reserved[24] = {};

  TensorCreateInfo() = default;
  TensorCreateInfo(const uint32_t* shape, uint32_t rank, DataType type = DataType::FLOAT32, bool manual = false)
      : ndims(rank), dtype(type), manual_dep(manual) {
    for (uint32_t i = 0; i < rank && i < MAX_TENSOR_DIMS; ++i) shapes[i] = shape[i];
  }
  TensorCreateInfo(std::initializer_list<uint32_t> shape, DataType type = DataType::FLOAT32, bool manual = false)
      : TensorCreateInfo(shape.begin(), static_cast<uint32_t>(shape.size()), type, manual) {}

  // Sets the value every element starts with. `T` must have the element's
  // size (float for FP32, uint16_t bits for FP16/BF16, int32_t for INT32...).
  template <typename T>
  void set_initial_value(T value) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8);
    initial_value_bits = 0;
    std::memcpy(&initial_value_bits, &value, sizeof(T));
    has_initial_value = true;
  }

  uint64_t numel() const {
    uint64_t n = 1;
    for (uint32_t i = 0; i < ndims && i < MAX_TENSOR_DIMS; ++i) n *= shapes[i];
    return n;
  }
  uint64_t nbytes() const { return numel() * element_size(dtype); }

  // OK iff ndims in 1..5 and dtype is valid.
  Status validate() const {
    if (ndims < 1 || ndims > MAX_TENSOR_DIMS) {
      return invalid_argument("TensorCreateInfo: ndims " + std::to_string(ndims) + " outside 1..5");
    }
    if (!is_valid_data_type(dtype)) {
      return invalid_argument("TensorCreateInfo: dtype value " + std::to_string(static_cast<int>(dtype)) +
                              " is not a DataType");
    }
    return Status::Ok();
  }

  // Upstream spelling of nbytes().
  uint64_t buffer_size_bytes() const { return nbytes(); }
};

static_assert(sizeof(TensorCreateInfo) == 64, "TensorCreateInfo mirrors ChipTensor's first cache line");
static_assert(std::is_trivially_copyable_v<TensorCreateInfo>);

}  // namespace taskring
