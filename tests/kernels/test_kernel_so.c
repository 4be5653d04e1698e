/* A kernel built as its own shared library, with no taskring link
 * dependency: reads the descriptor's fields by their ABI offsets.
 * Writes 42 + scalar0 into element 0 of tensor 0 (INT32); scalar0 == -1
 * makes it report a failure instead. */
#include "taskring/kernels/kernel_abi.h"

void kernel_entry(int64_t* args) {
  const unsigned char* desc = (const unsigned char*)(intptr_t)args[0];
  uint64_t addr, start;
  memcpy(&addr, desc + 0, 8);
  memcpy(&start, desc + 24, 8);
  int64_t s = args[1];
  if (s == -1) {
    taskring_kernel_fail(taskring_kernel_local(args), TASKRING_KERNEL_ERR_OUT_OF_RANGE, "so kernel: scalar -1 refused");
    return;
  }
  int32_t v = (int32_t)(42 + s);
  memcpy((void*)(intptr_t)(addr + start * 4), &v, 4);
}
