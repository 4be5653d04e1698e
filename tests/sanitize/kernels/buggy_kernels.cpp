// Kernel libraries for the sanitizer's CLI cases (`taskring orch --kernel
// ID=lib.so`), one kernel_entry per build (SANITIZE_KERNEL_*): the bugs a
// wrong tag hides, written the way a kernel gets them wrong.
//   POKE:     t0[s0] = s1 as int32, no bounds check
//   PEEK:     t1[0] = the int32 s0 bytes after t0's first element
//   SLOW_INC: sleeps 50 ms, then t0[:] += 1.0f
#include <stdint.h>
#include <unistd.h>

#include "taskring/kernels/kernel_abi.h"
#include "taskring/tensor/chip_tensor.hpp"

namespace {

const taskring::ChipTensor &tensor(int64_t *args, int i) {
  return *reinterpret_cast<const taskring::ChipTensor *>(static_cast<intptr_t>(args[i]));
}
[[maybe_unused]] int64_t scalar(int64_t *args, int i) { return args[taskring_kernel_local(args)->tensor_count + i]; }

}  // namespace

extern "C" __attribute__((visibility("default"))) void kernel_entry(int64_t *args) {
#if defined(SANITIZE_KERNEL_POKE)
  tensor(args, 0).data<int32_t>()[scalar(args, 0)] = static_cast<int32_t>(scalar(args, 1));
#elif defined(SANITIZE_KERNEL_PEEK)
  const auto *p = reinterpret_cast<const volatile int32_t *>(tensor(args, 0).data<char>() + scalar(args, 0));
  tensor(args, 1).data<int32_t>()[0] = *p;
#elif defined(SANITIZE_KERNEL_SLOW_INC)
  usleep(50000);
  const taskring::ChipTensor &t = tensor(args, 0);
  for (uint64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] += 1.0f;
#else
#error "define one SANITIZE_KERNEL_*"
#endif
}
