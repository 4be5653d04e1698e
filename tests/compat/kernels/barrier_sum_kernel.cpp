// A kernel library for the sync-start compat case (taskring orch --kernel
// ID=lib.so): every block publishes block_idx + 1, all blocks meet at an
// in-kernel barrier, then each writes the sum of what all published. A block
// that ran before its siblings published would write a short sum, and on sim
// without co-resident blocks the barrier would never complete.
// Tensors: 0 sync UINT32[>=1] (zero), 1 shared INT32[>=block_num], 2 out
// INT32[>=block_num].
#include <stdint.h>

#include "taskring/kernels/kernel_sync.h"
#include "tensor_base.hpp"

extern "C" __attribute__((visibility("default"))) void kernel_entry(int64_t *args) {
  KernelLocalContext *ctx = taskring_kernel_local(args);
  uint32_t *sync = tensor_base<uint32_t>(args, 0);
  int32_t *shared = tensor_base<int32_t>(args, 1);
  int32_t *out = tensor_base<int32_t>(args, 2);
  __atomic_store_n(&shared[ctx->block_idx], ctx->block_idx + 1, __ATOMIC_RELAXED);
  if (taskring_kernel_barrier(args, sync, static_cast<uint32_t>(ctx->block_num)) != 0) return;
  int32_t sum = 0;
  for (int i = 0; i < ctx->block_num; ++i) sum += __atomic_load_n(&shared[i], __ATOMIC_RELAXED);
  out[ctx->block_idx] = sum;
}
