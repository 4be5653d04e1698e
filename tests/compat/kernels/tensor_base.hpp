// The first element of a kernel's tensor argument `i`, as a T*: what the
// compat kernel libraries read and write (headers only, no taskring link).
#pragma once

#include <stdint.h>

#include "taskring/tensor/chip_tensor.hpp"

template <typename T>
static inline T *tensor_base(int64_t *args, int i) {
  const auto *t = reinterpret_cast<const taskring::ChipTensor *>(static_cast<intptr_t>(args[i]));
  return reinterpret_cast<T *>(static_cast<uintptr_t>(t->buffer.addr)) + t->start_offset;
}
