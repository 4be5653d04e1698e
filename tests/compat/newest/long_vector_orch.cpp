// Upstream-style long chain in upstream's newest spelling (taskring compat
// suite): `orch_args.scalar<int32_t>(0)`, `SIMPLER_ERROR_INVALID_ARGS`,
// `simpler::hbg::Tensor`. Twin: ../orch/long_vector_orch.cpp.
// c = a + b, then `chain` tasks each adding 1.0: out = a + b + chain.
// Entry: a, b in FP32[N], out FP32[N]; scalar chain.
#include <stdint.h>

#include "orchestration_api.h"  // NOLINT(build/include_subdir)

#define FUNC_ADD 0
#define FUNC_ADD_SCALAR 1

extern "C" {

__attribute__((visibility("default"))) OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &orch_args) {
  (void)orch_args;
  return OrchestrationConfig{.expected_arg_count = 4};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const simpler::hbg::Tensor &a = orch_args.tensor(0).ref();
  const simpler::hbg::Tensor &b = orch_args.tensor(1).ref();
  const simpler::hbg::Tensor &out = orch_args.tensor(2).ref();
  const int32_t chain = orch_args.scalar<int32_t>(0);
  if (chain < 1) {
    rt_report_fatal(SIMPLER_ERROR_INVALID_ARGS, "chain length %d must be >= 1", chain);
    return;
  }
  uint32_t shapes[1] = {a.shapes[0]};
  TensorCreateInfo ci(shapes, 1, DataType::FLOAT32);

  CoreTaskArgs first;
  first.add_input(a, b);
  first.add_output(ci);
  TaskOutputTensors cur = rt_submit_aiv_task(FUNC_ADD, first);
  for (int32_t i = 0; i < chain; ++i) {
    CoreTaskArgs step;
    step.add_input(cur.get_ref(0));
    if (i + 1 == chain) {
      step.add_output(out);
    } else {
      step.add_output(ci);
    }
    step.add_scalar(1.0f);
    TaskOutputTensors next = rt_submit_aiv_task(FUNC_ADD_SCALAR, step);
    if (i + 1 < chain) cur = next;
  }
}

}  // extern "C"
