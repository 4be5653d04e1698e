// Upstream-style vector example, host_build_graph flavour, in upstream's
// newest spelling (taskring compat suite): `simpler::hbg::Tensor`,
// `SIMPLER_SCOPE_GUARD()`, `TaskId`. Twin: ../orch/hbg_vector_orch.cpp.
// f = (a + b + 1) * (a + b + 2); with a = 2 and b = 3 every element is 42.
#include <stdint.h>

#include "orchestration_api.h"  // NOLINT(build/include_subdir)

#define FUNC_ADD 0
#define FUNC_ADD_SCALAR 1
#define FUNC_MUL 2

extern "C" {

__attribute__((visibility("default"))) OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &orch_args) {
  (void)orch_args;
  return OrchestrationConfig{.expected_arg_count = 3};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const simpler::hbg::Tensor &a = orch_args.tensor(0).ref();
  const simpler::hbg::Tensor &b = orch_args.tensor(1).ref();
  const simpler::hbg::Tensor &f = orch_args.tensor(2).ref();
  uint32_t shapes[1] = {a.shapes[0]};
  TensorCreateInfo ci(shapes, 1, DataType::FLOAT32);

  SIMPLER_SCOPE_GUARD();
  CoreTaskArgs t0;
  t0.add_input(a, b);
  t0.add_output(ci);
  TaskOutputTensors sum = rt_submit_aiv_task(FUNC_ADD, t0);

  CoreTaskArgs t1;
  t1.add_input(sum.get_ref(0));
  t1.add_output(ci);
  t1.add_scalar(1.0f);
  TaskOutputTensors plus1 = rt_submit_aiv_task(FUNC_ADD_SCALAR, t1);

  CoreTaskArgs t2;
  t2.add_input(sum.get_ref(0));
  t2.add_output(ci);
  t2.add_scalar(2.0f);
  TaskOutputTensors plus2 = rt_submit_aiv_task(FUNC_ADD_SCALAR, t2);

  CoreTaskArgs t3;
  t3.add_input(plus1.get_ref(0), plus2.get_ref(0));
  t3.add_output(f);
  rt_submit_aiv_task(FUNC_MUL, t3);
  const TaskId first = sum.task_id();
  LOG_INFO("hbg vector example: 4 tasks, first task ring %u local %u", (unsigned)first.ring(),
           (unsigned)first.local_id());
}

}  // extern "C"
