// A kernel library for the MIX FIFO compat case: the AIC kernel
// (kernel_entry with core_type AIC) pushes i*i for i < n through a
// one-producer one-consumer FIFO of `depth` slots; the AIV kernel pops them
// and writes out[i] = item - i*i + 1, so a correct run leaves out all 1.
// Tensors: 0 ctrl UINT32[2] (zero), 1 slots INT32[depth], 2 out INT32[n].
// Scalars: 0 n, 1 depth.
#include <stdint.h>

#include "taskring/kernels/kernel_sync.h"
#include "tensor_base.hpp"

extern "C" __attribute__((visibility("default"))) void kernel_entry(int64_t *args) {
  KernelLocalContext *ctx = taskring_kernel_local(args);
  uint32_t *ctrl = tensor_base<uint32_t>(args, 0);
  int32_t *slots = tensor_base<int32_t>(args, 1);
  int32_t *out = tensor_base<int32_t>(args, 2);
  const int32_t n = static_cast<int32_t>(args[ctx->tensor_count]);
  const uint32_t depth = static_cast<uint32_t>(args[ctx->tensor_count + 1]);
  for (int32_t i = 0; i < n; ++i) {
    int32_t v = i * i;
    if (ctx->core_type == TASKRING_CORE_AIC) {
      if (taskring_kernel_fifo_push(args, ctrl, slots, depth, sizeof v, &v) != 0) return;
    } else {
      if (taskring_kernel_fifo_pop(args, ctrl, slots, depth, sizeof v, &v) != 0) return;
      out[i] = v - i * i + 1;
    }
  }
}
