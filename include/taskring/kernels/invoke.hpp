// invoke_kernel: calls a kernel on given descriptors and scalars, the way a
// core does, and turns a kernel-reported failure into a Status.
//
// Used by tests, benchmarks and runtimes that run kernels inline. It builds
// the 50-slot argument array of kernel_abi.h: args[i] = &tensors[i],
// args[n + j] = scalars[j], args[48] = local context, args[49] = global.
#pragma once

#include <cstdint>
#include <string_view>

#include "taskring/base/status.hpp"
#include "taskring/kernels/kernel_abi.h"
#include "taskring/kernels/registry.hpp"
#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::kernels {

// Lays out the argument array a kernel receives (kernel_abi.h): args[i] =
// &tensors[i], args[n + j] = scalars[j], args[48] = `local`, args[49] =
// `global`. The one packing of kernel arguments, used by invoke_kernel and the
// chip runtimes' block launches (inline: every kernel call runs it).
// Precondition: n <= 32, m <= 16.
inline void pack_kernel_args(int64_t* args, const ChipTensor* tensors, int n, const uint64_t* scalars, int m,
                             KernelLocalContext* local, KernelGlobalContext* global) {
  for (int i = 0; i < n; ++i) args[i] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(&tensors[i]));
  for (int j = 0; j < m; ++j) args[n + j] = static_cast<int64_t>(scalars[j]);
  args[TASKRING_KERNEL_ARG_LOCAL_CONTEXT] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(local));
  args[TASKRING_KERNEL_ARG_GLOBAL_CONTEXT] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(global));
}

// Runs `fn` once on `n` descriptors and `m` scalars.
//
// `local_ctx` may be null: a context for block 0 of 1 on AIV core 0 is used.
// When given, its tensor_count, scalar_count and error fields are
// overwritten; the rest (block index, core) is kept. `global_ctx` may be null.
//
// Errors: INVALID_ARGUMENT when fn is null, n > 32 or m > 16 (the kernel is
// not called). When the kernel calls taskring_kernel_fail, the Status is
// "kernel '<name>' (func <id>) failed (code <c>): <message>" with code
// INVALID_ARGUMENT / OUT_OF_RANGE / UNIMPLEMENTED for the TASKRING_KERNEL_ERR_*
// codes and ABORTED for any other.
Status invoke_kernel(taskring_kernel_fn fn, const ChipTensor* tensors, int n, const uint64_t* scalars, int m,
                     KernelLocalContext* local_ctx = nullptr, std::string_view kernel_name = "kernel",
                     int32_t func_id = -1, KernelGlobalContext* global_ctx = nullptr);

// Looks `func_id` up in `registry` and invokes it; errors as lookup() and
// invoke_kernel(), the message naming the registered kernel name.
Status invoke_kernel(const KernelRegistry& registry, int32_t func_id, const ChipTensor* tensors, int n,
                     const uint64_t* scalars, int m, KernelLocalContext* local_ctx = nullptr);

// Scalar encodings used by the built-in kernels: a float travels as its bit
// pattern in the low 32 bits of the u64.
inline uint64_t scalar_from_float(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return bits;
}
inline float scalar_to_float(uint64_t v) {
  uint32_t bits = static_cast<uint32_t>(v);
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace taskring::kernels
