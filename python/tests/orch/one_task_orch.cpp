// One task: kernel func id 0 over the entry's tensor 0 (INOUT) with the
// entry's scalar 0 passed through. Lets the Python tests bind a kernel from a
// shared library (tests/kernels/test_kernel_so.c) and make it fail on demand.
#include "pto_orchestration_api.h"

extern "C" PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
  return PTO2OrchestrationConfig{2};
}

extern "C" void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {
  CoreTaskArgs args;
  args.add_inout(*orch_args.tensor(0)).add_scalar(orch_args.scalar(0));
  rt_submit_aiv_task(0, args);
}
