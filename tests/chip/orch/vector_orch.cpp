// The five-task vector example as an upstream-style orchestration library:
// includes only "pto_orchestration_api.h", links nothing from taskring, and
// is loaded with dlopen through ChipCallable::orchestration_library.
//   c = a + b; d = c + 1; e = c + 2; g = d * e; f = g + c   (a=2, b=3: f=47)
#include "pto_orchestration_api.h"

#define FUNC_ADD 0
#define FUNC_ADD_SCALAR 1
#define FUNC_MUL 2

extern "C" PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& orch_args) {
  (void)orch_args;
  return PTO2OrchestrationConfig{3};
}

extern "C" void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {
  const ChipTensor& a = *orch_args.tensor(0);
  const ChipTensor& b = *orch_args.tensor(1);
  const ChipTensor& f = *orch_args.tensor(2);
  uint32_t shape[2] = {a.shapes[0], a.shapes[1]};
  TensorCreateInfo ci(shape, 2, DataType::FLOAT32);
  LOG_DEBUG("vector example: %u x %u, %d clusters", shape[0], shape[1], rt_available_cluster_count());

  CoreTaskArgs args0;
  args0.add_input(a).add_input(b).add_output(ci);
  TaskOutputTensors out0 = rt_submit_aiv_task(FUNC_ADD, args0);
  const ChipTensor& c = out0.get_ref(0);

  PTO2_SCOPE() {
    CoreTaskArgs args1;
    args1.add_input(c).add_output(ci).add_scalar(1.0f);
    TaskOutputTensors out1 = rt_submit_aiv_task(FUNC_ADD_SCALAR, args1);

    CoreTaskArgs args2;
    args2.add_input(c).add_output(ci).add_scalar(2.0f);
    TaskOutputTensors out2 = rt_submit_aiv_task(FUNC_ADD_SCALAR, args2);

    CoreTaskArgs args3;
    args3.add_input(out1.get_ref(0)).add_input(out2.get_ref(0)).add_output(ci);
    TaskOutputTensors out3 = rt_submit_aiv_task(FUNC_MUL, args3);

    CoreTaskArgs args4;
    args4.add_input(out3.get_ref(0)).add_input(c).add_output(f);
    rt_submit_aiv_task(FUNC_ADD, args4);
  }
}
