// One task: kernel func id 0 over every entry tensor, with the entry's tags,
// and every entry scalar. The Python tests bind func 0 to a built-in kernel
// ("copy" for dtype round trips) or to a kernel library
// (tests/kernels/test_kernel_so.c, which fails on demand).
#include "pto_orchestration_api.h"

extern "C" PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
  return PTO2OrchestrationConfig{1};
}

extern "C" void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {
  CoreTaskArgs args;
  for (int i = 0; i < orch_args.tensor_count(); ++i) args.add_tensor(*orch_args.tensor(i), orch_args.tag(i));
  args.copy_scalars_from(orch_args);
  rt_submit_aiv_task(0, args);
}
