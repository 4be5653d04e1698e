// Upstream-style MIX orchestration (taskring compat suite): one task whose
// AIC kernel (func id 0) feeds its AIV0 kernel (func id 1) through a FIFO in
// device memory; the two kernels run together on one cluster.
// Entry: ctrl inout UINT32[2], slots inout INT32[depth], out INT32[n];
// scalar n.
#include <stdint.h>

#include "pto_orchestration_api.h"

#define FUNC_PRODUCER 0
#define FUNC_CONSUMER 1

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(
    const ChipTaskArgs &orch_args) {
  (void)orch_args;
  return PTO2OrchestrationConfig{
      .expected_arg_count = 4,
  };
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const ChipTensor &ctrl = orch_args.tensor(0).ref();
  const ChipTensor &slots = orch_args.tensor(1).ref();
  const ChipTensor &out = orch_args.tensor(2).ref();
  MixedKernels mk;
  mk.aic_kernel_id = FUNC_PRODUCER;
  mk.aiv0_kernel_id = FUNC_CONSUMER;
  CoreTaskArgs task;
  task.add_inout(ctrl, slots);
  task.add_output(out);
  task.add_scalar(orch_args.scalar(0), (uint64_t)slots.shapes[0]);
  PTO2TaskId id = rt_submit_task(mk, task).task_id();
  LOG_INFO("MIX FIFO task submitted (valid id: %d)", id.is_valid() ? 1 : 0);
}

}  // extern "C"
