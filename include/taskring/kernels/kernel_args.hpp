// KernelArgs: typed, checked access to a kernel's argument array, for
// kernels written in C++ against kernel_abi.h.
//
// Every check reports through taskring_kernel_fail with the message
// "<kernel>: <reason>" and returns false / nullptr so a kernel can write
//   const ChipTensor* x = a.tensor(0, "x"); if (!x) return;
// Counts come from the local context's tensor_count / scalar_count, which
// the runtime (and invoke_kernel) fills in.
#pragma once

#include <cstdarg>
#include <cstdint>

#include "taskring/kernels/kernel_abi.h"
#include "taskring/kernels/tile_view.hpp"
#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::kernels {

class KernelArgs {
 public:
  KernelArgs(int64_t* args, const char* kernel_name)
      : args_(args), ctx_(args ? taskring_kernel_local(args) : nullptr), name_(kernel_name) {}

  // False when there is no local context (nothing can be reported, so the
  // kernel must not run).
  bool usable() const { return ctx_ != nullptr; }
  int tensor_count() const { return ctx_->tensor_count; }
  int scalar_count() const { return ctx_->scalar_count; }
  KernelLocalContext* ctx() const { return ctx_; }

  // Checks that tensor_count is in [min_t, max_t] and scalar_count in
  // [min_s, max_s].
  bool expect_counts(int min_t, int max_t, int min_s, int max_s) const;

  // Tensor i, checked: non-null, ChipTensor::validate() OK, non-null address.
  const ChipTensor* tensor(int i, const char* role) const;
  // Tensor i read as 2-D (tile::view_2d); `tile_dtype` also requires a tile dtype.
  bool view(int i, const char* role, tile::View2D* out, bool tile_dtype = true) const;

  // Scalar j (args[tensor_count + j]); `fallback` when j >= scalar_count.
  uint64_t scalar(int j, uint64_t fallback = 0) const {
    return j < ctx_->scalar_count ? static_cast<uint64_t>(args_[ctx_->tensor_count + j]) : fallback;
  }
  float scalar_f32(int j, float fallback = 0.0f) const;

  // Reports "<kernel>: <printf message>" with `code`; returns false.
  bool fail(int32_t code, const char* fmt, ...) const __attribute__((format(printf, 3, 4)));

 private:
  int64_t* args_;
  KernelLocalContext* ctx_;
  const char* name_;
};

}  // namespace taskring::kernels
