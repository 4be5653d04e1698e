// Upstream-style long chain (taskring compat suite): c = a + b, then
// `chain` tasks each adding 1.0, the last one into the output:
// out = a + b + chain. Entry: a, b in FP32[N], out FP32[N]; scalar chain.
#include <stdint.h>

#include "pto_orchestration_api.h"

#define FUNC_ADD 0
#define FUNC_ADD_SCALAR 1

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(
    const ChipTaskArgs &orch_args) {
  (void)orch_args;
  return PTO2OrchestrationConfig{.expected_arg_count = 4};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const ChipTensor &a = orch_args.tensor(0).ref();
  const ChipTensor &b = orch_args.tensor(1).ref();
  const ChipTensor &out = orch_args.tensor(2).ref();
  const int64_t chain = (int64_t)orch_args.scalar(0);
  if (chain < 1) {
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "chain length %lld must be >= 1", (long long)chain);
    return;
  }
  uint32_t shapes[1] = {a.shapes[0]};
  TensorCreateInfo ci(shapes, 1, DataType::FLOAT32);
  const float one = 1.0f;

  CoreTaskArgs first;
  first.add_input(a, b);
  first.add_output(ci);
  TaskOutputTensors cur = rt_submit_aiv_task(FUNC_ADD, first);
  // All in the entry's scope: an intermediate must outlive its consumer.
  for (int64_t i = 0; i < chain; ++i) {
    CoreTaskArgs step;
    step.add_input(cur.get_ref(0));
    if (i + 1 == chain) step.add_output(out);
    else step.add_output(ci);
    step.add_scalar(one);
    TaskOutputTensors next = rt_submit_aiv_task(FUNC_ADD_SCALAR, step);
    if (i + 1 < chain) cur = next;
  }
}

}  // extern "C"
