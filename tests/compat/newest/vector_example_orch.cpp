// Upstream-style vector example in upstream's newest spelling (taskring
// compat suite; the tensormap_and_ringbuffer vector example as upstream
// spells it after 6ebaf7715): `orchestration_api.h`, `simpler::tmr::Tensor`,
// `OrchestrationConfig`, `SIMPLER_SCOPE()`. Twin: ../orch/vector_orch.cpp.
//   c = a + b (outer scope); d = c + 1; e = c + 2; g = d * e; f = g + c
// With a = 2 and b = 3 every element of f is 47.
#include <stddef.h>
#include <stdint.h>

#include "orchestration_api.h"  // NOLINT(build/include_subdir)

#define FUNC_ADD 0
#define FUNC_ADD_SCALAR 1
#define FUNC_MUL 2

extern "C" {

__attribute__((visibility("default"))) OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &orch_args) {
  (void)orch_args;
  return OrchestrationConfig{
      .expected_arg_count = 3,
  };
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const simpler::tmr::Tensor &ext_a = orch_args.tensor(0).ref();
  const simpler::tmr::Tensor &ext_b = orch_args.tensor(1).ref();
  const simpler::tmr::Tensor &ext_f = orch_args.tensor(2).ref();

  uint32_t shapes[1] = {ext_a.shapes[0]};
  TensorCreateInfo tmp_ci(shapes, 1, DataType::FLOAT32);

  CoreTaskArgs sum_args;
  sum_args.add_input(ext_a, ext_b);
  sum_args.add_output(tmp_ci);
  TaskOutputTensors sum_outs = rt_submit_aiv_task(FUNC_ADD, sum_args);
  const simpler::tmr::Tensor &c = sum_outs.get_ref(0);

  SIMPLER_SCOPE() {
    CoreTaskArgs plus1;
    plus1.add_input(c);
    plus1.add_output(tmp_ci);
    plus1.add_scalar(1.0f, (uint64_t)3);
    TaskOutputTensors d_outs = rt_submit_aiv_task(FUNC_ADD_SCALAR, plus1);
    const simpler::tmr::Tensor &d = d_outs.get_ref(0);

    CoreTaskArgs plus2;
    plus2.add_input(c);
    plus2.add_output(tmp_ci);
    plus2.add_scalar(2.0f, (uint64_t)3);
    TaskOutputTensors e_outs = rt_submit_aiv_task(FUNC_ADD_SCALAR, plus2);
    const simpler::tmr::Tensor &e = e_outs.get_ref(0);

    CoreTaskArgs product;
    product.add_input(d, e);
    product.add_output(tmp_ci);
    product.add_scalar((uint64_t)3);
    TaskOutputTensors g_outs = rt_submit_aiv_task(FUNC_MUL, product);
    const simpler::tmr::Tensor &g = g_outs.get_ref(0);

    CoreTaskArgs final_sum;
    final_sum.add_input(g, c);
    final_sum.add_inout(ext_f);
    rt_submit_aiv_task(FUNC_ADD, final_sum);
  }
}

}  // extern "C"
