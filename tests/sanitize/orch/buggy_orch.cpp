// One orchestration bug per SANITIZE_BUG value, for
// `taskring orch buggy_orch.cpp -D SANITIZE_BUG=N --sanitize tags,schedule`
// (docs/sanitizer.md shows what each prints). Arguments: x in:f32[4096],
// y inout:f32[4096], z out:f32[4096]. Kernels: 0 = poke, 1 = peek,
// 2 = slow_inc (tests/sanitize/kernels), 3 = the built-in copy.
//   1  the kernel writes an argument tagged INPUT
//   2  the kernel writes past the end of its view
//   3  the kernel reads a tensor it was not passed
//   4  two writers of the same bytes, both tagged NO_DEP
//   5  a consumer reads an intermediate through NO_DEP
#include "pto_orchestration_api.h"

extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const ChipTensor &x = orch_args.tensor(0).ref();
  const ChipTensor &y = orch_args.tensor(1).ref();
  const ChipTensor &z = orch_args.tensor(2).ref();
#if SANITIZE_BUG == 1
  (void)y;
  (void)z;
  CoreTaskArgs t;
  t.add_input(x).add_scalar(3).add_scalar(7);
  rt_submit_aiv_task(0, t);
#elif SANITIZE_BUG == 2
  (void)x;
  (void)y;
  const uint32_t shape[1] = {1024}, at[1] = {0};
  const ChipTensor head = z.view(shape, at);
  CoreTaskArgs t;
  t.add_output(head).add_scalar(1024).add_scalar(1);
  rt_submit_aiv_task(0, t);
#elif SANITIZE_BUG == 3
  // z's bytes, reached through x.
  CoreTaskArgs t;
  t.add_input(x).add_output(y).add_scalar(z.buffer.addr - x.buffer.addr + 8192);
  rt_submit_aiv_task(1, t);
#elif SANITIZE_BUG == 4
  CoreTaskArgs a;
  a.add_input(x).add_no_dep(z);
  rt_submit_aiv_task(3, a);
  CoreTaskArgs b;
  b.add_input(y).add_no_dep(z);
  rt_submit_aiv_task(3, b);
#elif SANITIZE_BUG == 5
  (void)x;
  CoreTaskArgs inc;
  inc.add_inout(y);
  rt_submit_aiv_task(2, inc);
  CoreTaskArgs c;
  c.add_no_dep(y).add_output(z);
  rt_submit_aiv_task(3, c);
#else
#error "define SANITIZE_BUG in 1..5"
#endif
}
