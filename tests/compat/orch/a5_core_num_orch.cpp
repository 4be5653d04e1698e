// Upstream-style orchestration in the newer / a5 spelling (taskring compat
// suite): `orchestration_api.h`, `OrchestrationConfig`,
// `launch_spec.set_core_num`, a MixedKernels submit and a chained
// `.task_id()`. Entry: a, b in FP32[N]; out FP32[N]. out = a + b, computed
// by a 2-block SPMD task (each block writes the same sums).
#include <stdint.h>

#include "orchestration_api.h"

#define FUNC_ADD 0

extern "C" {

__attribute__((visibility("default"))) OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &orch_args) {
  (void)orch_args;
  return OrchestrationConfig{
      .expected_arg_count = 3,
  };
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const ChipTensor &a = orch_args.tensor(0).ref();
  const ChipTensor &b = orch_args.tensor(1).ref();
  const ChipTensor &out = orch_args.tensor(2).ref();

  MixedKernels mk;
  mk.aiv0_kernel_id = FUNC_ADD;
  CoreTaskArgs args;
  args.add_input(a, b);
  args.add_output(out);
  args.launch_spec.set_core_num(2);
  args.launch_spec.set_require_sync_start(false);
  PTO2TaskId id = rt_submit_task(mk, args).task_id();
  if (!id.is_valid()) rt_report_fatal(PTO2_ERROR_EXPLICIT_ORCH_FATAL, "submit returned no task id");
}

}  // extern "C"
