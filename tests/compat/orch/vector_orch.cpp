// Upstream-style vector example (tensormap_and_ringbuffer flavour), written
// for taskring's compat suite:
//   c = a + b (outer scope); d = c + 1; e = c + 2; g = d * e; f = g + c
// With a = 2 and b = 3 every element of f is 47. The add_scalar and mul
// tasks carry the extra trailing scalars upstream's example kernels take.
#include <stddef.h>
#include <stdint.h>

#include "pto_orchestration_api.h"

#define FUNC_ADD 0
#define FUNC_ADD_SCALAR 1
#define FUNC_MUL 2

static uint64_t float_bits(float v) {
  union {
    float f;
    uint64_t u;
  } conv;
  conv.u = 0;
  conv.f = v;
  return conv.u;
}

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(
    const ChipTaskArgs &orch_args) {
  (void)orch_args;
  return PTO2OrchestrationConfig{
      .expected_arg_count = 3,
  };
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const ChipTensor &ext_a = orch_args.tensor(0).ref();
  const ChipTensor &ext_b = orch_args.tensor(1).ref();
  const ChipTensor &ext_f = orch_args.tensor(2).ref();

  uint32_t n = ext_a.shapes[0];
  LOG_INFO("vector example: %u elements", n);
  uint32_t shapes[1] = {n};
  TensorCreateInfo tmp_ci(shapes, 1, DataType::FLOAT32);

  CoreTaskArgs sum_args;
  sum_args.add_input(ext_a);
  sum_args.add_input(ext_b);
  sum_args.add_output(tmp_ci);
  TaskOutputTensors sum_outs = rt_submit_aiv_task(FUNC_ADD, sum_args);
  const ChipTensor &c = sum_outs.get_ref(0);

  PTO2_SCOPE() {
    CoreTaskArgs plus1;
    plus1.add_input(c);
    plus1.add_output(tmp_ci);
    plus1.add_scalar(float_bits(1.0f));
    plus1.add_scalar((uint64_t)3);
    TaskOutputTensors d_outs = rt_submit_aiv_task(FUNC_ADD_SCALAR, plus1);
    const ChipTensor &d = d_outs.get_ref(0);

    CoreTaskArgs plus2;
    plus2.add_input(c);
    plus2.add_output(tmp_ci);
    plus2.add_scalar(float_bits(2.0f));
    plus2.add_scalar((uint64_t)3);
    TaskOutputTensors e_outs = rt_submit_aiv_task(FUNC_ADD_SCALAR, plus2);
    const ChipTensor &e = e_outs.get_ref(0);

    CoreTaskArgs product;
    product.add_input(d);
    product.add_input(e);
    product.add_output(tmp_ci);
    product.add_scalar((uint64_t)3);
    TaskOutputTensors g_outs = rt_submit_aiv_task(FUNC_MUL, product);
    const ChipTensor &g = g_outs.get_ref(0);

    CoreTaskArgs final_sum;
    final_sum.add_input(g);
    final_sum.add_input(c);
    final_sum.add_inout(ext_f);
    rt_submit_aiv_task(FUNC_ADD, final_sum);
  }
}

}  // extern "C"
