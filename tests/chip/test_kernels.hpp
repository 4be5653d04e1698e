// Small kernels for runtime tests: elementwise FP32 over any view rank <= 2,
// written against the raw kernel ABI (no tile library) so runtime tests do
// not depend on the kernel layer.
#pragma once

#include <cstring>

#include "taskring/kernels/kernel_abi.h"
#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::testing {

inline const ChipTensor* arg_tensor(int64_t* args, int i) { return reinterpret_cast<const ChipTensor*>(args[i]); }
inline float arg_f32(int64_t* args, int i) {
  uint32_t bits = static_cast<uint32_t>(args[i]);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Visits every element of a view (any rank) with its element offset.
template <typename Fn>
inline void for_each_offset(const ChipTensor& t, Fn&& fn) {
  uint32_t idx[MAX_TENSOR_DIMS] = {};
  uint64_t n = t.numel();
  for (uint64_t k = 0; k < n; ++k) {
    uint64_t off = t.start_offset;
    for (uint32_t d = 0; d < t.ndims; ++d) off += static_cast<uint64_t>(idx[d]) * t.strides[d];
    fn(k, off);
    for (int d = static_cast<int>(t.ndims) - 1; d >= 0; --d) {
      if (++idx[d] < t.shapes[d]) break;
      idx[d] = 0;
    }
  }
}

inline float* base_f32(const ChipTensor& t) { return reinterpret_cast<float*>(static_cast<uintptr_t>(t.buffer.addr)); }

// out = a + b (tensors 0, 1 -> 2), same shapes.
extern "C" inline void test_add(int64_t* args) {
  const ChipTensor *a = arg_tensor(args, 0), *b = arg_tensor(args, 1), *o = arg_tensor(args, 2);
  KernelLocalContext* ctx = taskring_kernel_local(args);
  if (a->numel() != b->numel() || a->numel() != o->numel()) {
    taskring_kernel_fail(ctx, 3, "test_add: element counts differ");
    return;
  }
  std::vector<uint64_t> ao, bo;
  for_each_offset(*a, [&](uint64_t, uint64_t off) { ao.push_back(off); });
  for_each_offset(*b, [&](uint64_t, uint64_t off) { bo.push_back(off); });
  for_each_offset(*o, [&](uint64_t k, uint64_t off) { base_f32(*o)[off] = base_f32(*a)[ao[k]] + base_f32(*b)[bo[k]]; });
}

// out = a + scalar0 (float bits).
extern "C" inline void test_add_scalar(int64_t* args) {
  const ChipTensor *a = arg_tensor(args, 0), *o = arg_tensor(args, 1);
  float s = arg_f32(args, 2);
  std::vector<uint64_t> ao;
  for_each_offset(*a, [&](uint64_t, uint64_t off) { ao.push_back(off); });
  for_each_offset(*o, [&](uint64_t k, uint64_t off) { base_f32(*o)[off] = base_f32(*a)[ao[k]] + s; });
}

// out = a * b.
extern "C" inline void test_mul(int64_t* args) {
  const ChipTensor *a = arg_tensor(args, 0), *b = arg_tensor(args, 1), *o = arg_tensor(args, 2);
  std::vector<uint64_t> ao, bo;
  for_each_offset(*a, [&](uint64_t, uint64_t off) { ao.push_back(off); });
  for_each_offset(*b, [&](uint64_t, uint64_t off) { bo.push_back(off); });
  for_each_offset(*o, [&](uint64_t k, uint64_t off) { base_f32(*o)[off] = base_f32(*a)[ao[k]] * base_f32(*b)[bo[k]]; });
}

// Does nothing (overhead measurements, dependency-only graphs).
extern "C" inline void test_empty(int64_t*) {}

// Always fails.
extern "C" inline void test_fail(int64_t* args) {
  taskring_kernel_fail(taskring_kernel_local(args), 42, "deliberate failure for the test");
}

}  // namespace taskring::testing
