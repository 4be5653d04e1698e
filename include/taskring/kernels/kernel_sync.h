/* Waits between co-resident kernels: what a kernel uses on sim to wait for a
 * sibling that runs at the same time as it does. C-compatible, header-only,
 * no link dependency on taskring (kernels may live in their own library).
 *
 * Co-resident kernels are the blocks of a task submitted with
 * launch_spec.set_require_sync_start(true) (all of them start together) and
 * the AIC/AIV kernels of one block of a MIX task (one cluster). Kernels of
 * other tasks, or other blocks of a task without require_sync_start, are not
 * guaranteed to run concurrently: waiting for them ends in the deadline.
 *
 * Every wait polls a 32-bit word in device memory (a tensor the
 * orchestration passes to the task, zero-initialised before the task runs)
 * and between polls calls the runtime's wait hook
 * (KernelGlobalContext::wait_yield), which lets the siblings run. A wait that
 * lasts longer than the runtime's deadline (TASKRING_STALL_TIMEOUT_MS) fails
 * the kernel with TASKRING_KERNEL_ERR_DEADLINE and returns non-zero; the
 * kernel must then return. A wait never hangs a run.
 *
 * Memory order: a signal/arrive releases every write the kernel made before
 * it; a wait that returns 0 acquires them.
 *
 *   taskring_kernel_wait_u32(args, word, v)   wait until *word >= v (mod 2^32)
 *   taskring_kernel_signal_u32(word, v)       *word = v
 *   taskring_kernel_arrive_u32(word, d)       *word += d, returns the new value
 *   taskring_kernel_barrier(args, word, n)    n parties meet (reusable)
 *   taskring_kernel_fifo_push/pop(...)        one-producer one-consumer FIFO
 */
#ifndef TASKRING_KERNELS_KERNEL_SYNC_H_
#define TASKRING_KERNELS_KERNEL_SYNC_H_

#include <stdint.h>
#include <string.h>

#include "taskring/kernels/kernel_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Waits until the counter at `word` has reached `value` (compared modulo
 * 2^32, so monotonic counters may wrap). 0 on success; -1 after failing the
 * kernel (deadline, or no runtime to wait in). */
static inline int taskring_kernel_wait_u32(int64_t* args, const uint32_t* word, uint32_t value) {
  KernelLocalContext* local = taskring_kernel_local(args);
  KernelGlobalContext* global = taskring_kernel_global(args);
  int32_t first_poll = 1;
  for (;;) {
    uint32_t now = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    if ((int32_t)(now - value) >= 0) return 0;
    if (global == 0 || global->wait_yield == 0) {
      taskring_kernel_fail(local, TASKRING_KERNEL_ERR_DEADLINE, "kernel wait outside a runtime launch (no wait hook)");
      return -1;
    }
    if (global->wait_yield(local, first_poll) != 0) {
      taskring_kernel_fail(local, TASKRING_KERNEL_ERR_DEADLINE,
                           "kernel wait: no co-resident sibling signalled before the deadline "
                           "(TASKRING_STALL_TIMEOUT_MS)");
      return -1;
    }
    first_poll = 0;
  }
}

/* Publishes `value` at `word`. */
static inline void taskring_kernel_signal_u32(uint32_t* word, uint32_t value) {
  __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

/* Adds `delta` to the counter at `word`; returns the new value. */
static inline uint32_t taskring_kernel_arrive_u32(uint32_t* word, uint32_t delta) {
  return __atomic_add_fetch(word, delta, __ATOMIC_ACQ_REL);
}

/* A barrier of `parties` kernels over one zero-initialised counter. The
 * counter only grows, so the same word serves any number of rounds as long
 * as every party takes part in each. 0 on success, -1 after a failed wait. */
static inline int taskring_kernel_barrier(int64_t* args, uint32_t* word, uint32_t parties) {
  if (parties == 0) return 0;
  uint32_t ticket = taskring_kernel_arrive_u32(word, 1);
  uint32_t round_end = ((ticket - 1) / parties + 1) * parties;
  return taskring_kernel_wait_u32(args, word, round_end);
}

/* One-producer one-consumer FIFO of `depth` items of `item_bytes` each.
 * `ctrl` is two zero-initialised counters (ctrl[0] items pushed, ctrl[1]
 * items popped); `slots` holds depth * item_bytes bytes. */
static inline int taskring_kernel_fifo_push(int64_t* args, uint32_t* ctrl, void* slots, uint32_t depth,
                                            uint32_t item_bytes, const void* item) {
  uint32_t pushed = __atomic_load_n(&ctrl[0], __ATOMIC_RELAXED);
  /* Room when fewer than `depth` items are unread. */
  if (taskring_kernel_wait_u32(args, &ctrl[1], pushed - depth + 1) != 0) return -1;
  memcpy((char*)slots + (uint64_t)(pushed % depth) * item_bytes, item, item_bytes);
  taskring_kernel_signal_u32(&ctrl[0], pushed + 1);
  return 0;
}

static inline int taskring_kernel_fifo_pop(int64_t* args, uint32_t* ctrl, const void* slots, uint32_t depth,
                                           uint32_t item_bytes, void* item) {
  uint32_t popped = __atomic_load_n(&ctrl[1], __ATOMIC_RELAXED);
  if (taskring_kernel_wait_u32(args, &ctrl[0], popped + 1) != 0) return -1;
  memcpy(item, (const char*)slots + (uint64_t)(popped % depth) * item_bytes, item_bytes);
  taskring_kernel_signal_u32(&ctrl[1], popped + 1);
  return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* TASKRING_KERNELS_KERNEL_SYNC_H_ */
