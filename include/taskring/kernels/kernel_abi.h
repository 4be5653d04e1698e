/* Kernel ABI: what a core calls and what a kernel sees. C-compatible, no
 * link dependency on taskring (kernels may live in their own shared library).
 *
 *   extern "C" void kernel_entry(int64_t* args);
 *
 *   args[0 .. T-1]        address of the ChipTensor descriptor of tensor i
 *   args[T .. T+S-1]      scalar j as its raw 64-bit pattern
 *   args[TASKRING_KERNEL_ARG_LOCAL_CONTEXT]   (48) address of KernelLocalContext
 *   args[TASKRING_KERNEL_ARG_GLOBAL_CONTEXT]  (49) address of KernelGlobalContext
 *
 * T <= 32 and S <= 16, so tensors and scalars never reach slot 48. The
 * descriptors a kernel receives are the core's view: `buffer.addr` is an
 * address the kernel dereferences directly (on sim, the arena mapping of the
 * device address), so upstream-style kernels that compute
 * `buffer.addr + start_offset * elem_size` work unchanged. docs/kernels.md
 * documents the layout in full.
 *
 * Errors: a kernel that cannot handle its arguments calls
 * taskring_kernel_fail(ctx, code, message) and returns. The runtime fails the
 * task with a message naming the task, the kernel and this text. */
#ifndef TASKRING_KERNELS_KERNEL_ABI_H_
#define TASKRING_KERNELS_KERNEL_ABI_H_

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TASKRING_KERNEL_MAX_TENSORS 32
#define TASKRING_KERNEL_MAX_SCALARS 16
#define TASKRING_KERNEL_ARG_LOCAL_CONTEXT 48
#define TASKRING_KERNEL_ARG_GLOBAL_CONTEXT 49
#define TASKRING_KERNEL_ARG_SLOTS 50
#define TASKRING_KERNEL_ERROR_CAPACITY 192
#define TASKRING_MAX_FUNC_ID 1024

typedef void (*taskring_kernel_fn)(int64_t* args);

/* Error codes a kernel passes to taskring_kernel_fail. Any non-zero value is
 * a failure; these map onto the runtime's INVALID_ARGUMENT, OUT_OF_RANGE,
 * UNIMPLEMENTED and DEADLINE_EXCEEDED status codes (others become ABORTED). */
enum {
  TASKRING_KERNEL_ERR_INVALID_ARGUMENT = 1, /* rank, shape, dtype, count */
  TASKRING_KERNEL_ERR_OUT_OF_RANGE = 2,     /* an index read from a tensor */
  TASKRING_KERNEL_ERR_UNSUPPORTED = 3,      /* valid but not implemented */
  TASKRING_KERNEL_ERR_DEADLINE = 4 /* a wait (comm counter, sibling signal) passed its deadline or was aborted */
};

/* Core types. */
enum { TASKRING_CORE_AIC = 0, TASKRING_CORE_AIV = 1 };

/* Per-launch (per block) context. */
typedef struct KernelLocalContext {
  int32_t block_idx;    /* 0 .. block_num-1 */
  int32_t block_num;    /* SPMD blocks of this task (>= 1) */
  int32_t core_id;      /* physical core id: AIC [0, C), AIV [C, 3C) */
  int32_t core_type;    /* TASKRING_CORE_AIC / TASKRING_CORE_AIV */
  int32_t sub_block_id; /* 0 for AIC and AIV0, 1 for AIV1 of a MIX task */
  int32_t tensor_count;
  int32_t scalar_count;
  int32_t func_id;
  /* Written by taskring_kernel_fail; read by the runtime after the call. */
  int32_t error_code; /* 0: success */
  char error_message[TASKRING_KERNEL_ERROR_CAPACITY];
} KernelLocalContext;

/* Per-chip context. */
typedef struct KernelGlobalContext {
  int32_t cluster_count;
  int32_t aiv_count;
  /* The wait hook behind the primitives of taskring/kernels/kernel_sync.h:
   * a kernel that waits for a co-resident sibling (another block of a
   * require_sync_start task, the AIC/AIV kernels of a MIX task) calls it
   * between polls, with first_poll = 1 on the first poll of a wait (the
   * deadline counts from there). It lets the siblings run and returns 0, or
   * non-zero once the wait has lasted longer than the runtime's deadline
   * (the caller must then fail and return). Null outside a runtime launch. */
  int32_t (*wait_yield)(struct KernelLocalContext* ctx, int32_t first_poll);
  void* reserved[3];
} KernelGlobalContext;

static inline KernelLocalContext* taskring_kernel_local(int64_t* args) {
  return (KernelLocalContext*)(intptr_t)args[TASKRING_KERNEL_ARG_LOCAL_CONTEXT];
}
static inline KernelGlobalContext* taskring_kernel_global(int64_t* args) {
  return (KernelGlobalContext*)(intptr_t)args[TASKRING_KERNEL_ARG_GLOBAL_CONTEXT];
}

/* Reports a failure (first one wins). `code` must be non-zero. */
static inline void taskring_kernel_fail(KernelLocalContext* ctx, int32_t code, const char* message) {
  if (ctx == 0 || ctx->error_code != 0) return;
  ctx->error_code = code != 0 ? code : 1;
  size_t n = strlen(message);
  if (n >= TASKRING_KERNEL_ERROR_CAPACITY) n = TASKRING_KERNEL_ERROR_CAPACITY - 1;
  memcpy(ctx->error_message, message, n);
  ctx->error_message[n] = '\0';
}

#ifdef __cplusplus
}
#endif

#endif /* TASKRING_KERNELS_KERNEL_ABI_H_ */
