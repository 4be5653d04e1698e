// Upstream-style vector example, host_build_graph flavour (taskring compat
// suite): f = (a + b + 1) * (a + b + 2), one scalar per add_scalar and none
// for mul. With a = 2 and b = 3 every element of f is 42.
#include <stdint.h>

#include "pto_orchestration_api.h"

#define FUNC_ADD 0
#define FUNC_ADD_SCALAR 1
#define FUNC_MUL 2

static uint64_t f32_bits(float v) {
  union {
    float f;
    uint32_t u;
  } conv;
  conv.f = v;
  return (uint64_t)conv.u;
}

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(
    const ChipTaskArgs &orch_args) {
  (void)orch_args;
  return PTO2OrchestrationConfig{.expected_arg_count = 3};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const ChipTensor &a = orch_args.tensor(0).ref();
  const ChipTensor &b = orch_args.tensor(1).ref();
  const ChipTensor &f = orch_args.tensor(2).ref();
  uint32_t shapes[1] = {a.shapes[0]};
  TensorCreateInfo ci(shapes, 1, DataType::FLOAT32);

  PTO2_SCOPE_GUARD();
  CoreTaskArgs t0;
  t0.add_input(a, b);
  t0.add_output(ci);
  TaskOutputTensors sum = rt_submit_aiv_task(FUNC_ADD, t0);

  CoreTaskArgs t1;
  t1.add_input(sum.get_ref(0));
  t1.add_output(ci);
  t1.add_scalar(f32_bits(1.0f));
  TaskOutputTensors plus1 = rt_submit_aiv_task(FUNC_ADD_SCALAR, t1);

  CoreTaskArgs t2;
  t2.add_input(sum.get_ref(0));
  t2.add_output(ci);
  t2.add_scalar(f32_bits(2.0f));
  TaskOutputTensors plus2 = rt_submit_aiv_task(FUNC_ADD_SCALAR, t2);

  CoreTaskArgs t3;
  t3.add_input(plus1.get_ref(0), plus2.get_ref(0));
  t3.add_output(f);
  rt_submit_aiv_task(FUNC_MUL, t3);
  LOG_INFO("hbg vector example: 4 tasks, last id valid %d", (int)sum.task_id().is_valid());
}

}  // extern "C"
