// Host tensors and a registry of the built-in kernels for the kernel tests.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <vector>

#include "taskring/kernels/builtin.hpp"
#include "taskring/kernels/invoke.hpp"
#include "taskring/kernels/tile.hpp"

namespace taskring::kernels::testing {

// A contiguous host tensor; elements read and written as double.
class HostTensor {
 public:
  HostTensor(std::vector<uint32_t> shape, DataType dtype) : shape_(std::move(shape)), dtype_(dtype) {
    numel_ = 1;
    for (uint32_t s : shape_) numel_ *= s;
    storage_.assign((numel_ * element_size(dtype) + 7) / 8 + 1, 0);
    auto t = try_make_tensor(reinterpret_cast<uint64_t>(storage_.data()), numel_ * element_size(dtype), shape_, dtype);
    EXPECT_TRUE(t.ok()) << t.status().to_string();
    desc_ = *t;
  }
  HostTensor(const HostTensor&) = delete;

  const ChipTensor& t() const { return desc_; }
  size_t numel() const { return numel_; }
  DataType dtype() const { return dtype_; }
  void* ptr(size_t i) const {
    return reinterpret_cast<char*>(const_cast<uint64_t*>(storage_.data())) + i * element_size(dtype_);
  }
  // Stores v rounded to the dtype (tile_cast rules); INT32 stores exactly.
  void set(size_t i, double v) {
    if (dtype_ == DataType::INT32) {
      int32_t x = static_cast<int32_t>(v);
      std::memcpy(ptr(i), &x, 4);
    } else {
      tile::write_from_float(ptr(i), dtype_, static_cast<float>(v));
    }
  }
  double get(size_t i) const {
    if (dtype_ == DataType::INT32) {
      int32_t x;
      std::memcpy(&x, ptr(i), 4);
      return x;
    }
    return tile::read_as_float(ptr(i), dtype_);
  }
  // Row-major 2-D / 3-D accessors.
  double at(size_t r, size_t c) const { return get(r * shape_.back() + c); }
  void set_at(size_t r, size_t c, double v) { set(r * shape_.back() + c, v); }
  void fill_random(uint32_t seed, double lo = -2.0, double hi = 2.0) {
    std::mt19937 g(seed);
    std::uniform_real_distribution<double> d(lo, hi);
    for (size_t i = 0; i < numel_; ++i) set(i, d(g));
  }
  void fill(double v) {
    for (size_t i = 0; i < numel_; ++i) set(i, v);
  }

 private:
  std::vector<uint32_t> shape_;
  DataType dtype_;
  size_t numel_;
  std::vector<uint64_t> storage_;
  ChipTensor desc_;
};

inline const KernelRegistry& builtins() {
  static const KernelRegistry* r = [] {
    auto* reg = new KernelRegistry();
    Status s = register_builtin_kernels(*reg);
    EXPECT_TRUE(s.ok()) << s.to_string();
    return reg;
  }();
  return *r;
}

inline Status run(int32_t id, std::initializer_list<ChipTensor> tensors, std::initializer_list<uint64_t> scalars = {}) {
  std::vector<ChipTensor> ts(tensors);
  std::vector<uint64_t> ss(scalars);
  return invoke_kernel(builtins(), id, ts.data(), static_cast<int>(ts.size()), ss.data(), static_cast<int>(ss.size()));
}

inline uint64_t f32(float f) { return scalar_from_float(f); }

// Relative tolerance of storing into a dtype (half an ulp), 0 for FP32 work.
inline double store_rel_tol(DataType t) {
  switch (t) {
    case DataType::BF16: return 1.0 / 256;   // 2^-8
    case DataType::FP16: return 1.0 / 2048;  // 2^-11
    default: return 0.0;
  }
}

}  // namespace taskring::kernels::testing
