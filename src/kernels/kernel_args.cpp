#include "taskring/kernels/kernel_args.hpp"

#include <cstdio>

namespace taskring::kernels {

bool KernelArgs::fail(int32_t code, const char* fmt, ...) const {
  char buf[TASKRING_KERNEL_ERROR_CAPACITY];
  int n = std::snprintf(buf, sizeof buf, "%s: ", name_);
  if (n < 0) n = 0;
  if (n < static_cast<int>(sizeof buf)) {
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf + n, sizeof buf - n, fmt, ap);
    va_end(ap);
  }
  taskring_kernel_fail(ctx_, code, buf);
  return false;
}

bool KernelArgs::expect_counts(int min_t, int max_t, int min_s, int max_s) const {
  if (ctx_->tensor_count < min_t || ctx_->tensor_count > max_t) {
    if (min_t == max_t)
      return fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "expects %d tensors, got %d", min_t, ctx_->tensor_count);
    return fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "expects %d..%d tensors, got %d", min_t, max_t,
                ctx_->tensor_count);
  }
  if (ctx_->scalar_count < min_s || ctx_->scalar_count > max_s) {
    if (min_s == max_s)
      return fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "expects %d scalars, got %d", min_s, ctx_->scalar_count);
    return fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "expects %d..%d scalars, got %d", min_s, max_s,
                ctx_->scalar_count);
  }
  return true;
}

const ChipTensor* KernelArgs::tensor(int i, const char* role) const {
  if (i >= ctx_->tensor_count) {
    fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "tensor %d (%s) missing: %d tensors given", i, role, ctx_->tensor_count);
    return nullptr;
  }
  auto* t = reinterpret_cast<const ChipTensor*>(static_cast<uintptr_t>(args_[i]));
  if (t == nullptr) {
    fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "tensor %d (%s) descriptor is null", i, role);
    return nullptr;
  }
  Status s = t->validate();
  if (!s.ok()) {
    fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "tensor %d (%s): %s", i, role, s.message().c_str());
    return nullptr;
  }
  if (t->buffer.addr == 0) {
    fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "tensor %d (%s) has a null buffer address", i, role);
    return nullptr;
  }
  return t;
}

bool KernelArgs::view(int i, const char* role, tile::View2D* out, bool tile_dtype) const {
  const ChipTensor* t = tensor(i, role);
  if (t == nullptr) return false;
  Expected<tile::View2D> v = tile_dtype ? tile::tile_view_2d(*t) : tile::view_2d(*t);
  if (!v.ok())
    return fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "tensor %d (%s): %s", i, role, v.status().message().c_str());
  *out = *v;
  return true;
}

float KernelArgs::scalar_f32(int j, float fallback) const {
  if (j >= ctx_->scalar_count) return fallback;
  uint32_t bits = static_cast<uint32_t>(static_cast<uint64_t>(args_[ctx_->tensor_count + j]));
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace taskring::kernels
