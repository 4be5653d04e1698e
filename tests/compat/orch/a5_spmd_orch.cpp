// Twin of ../newest/a5_spmd_orch.cpp in the 6ebaf7715 spelling (taskring compat suite):
// the same orchestration with `pto_orchestration_api.h` and `ChipTensor`; the same
// guard test, entry, tensors and results.
#include <stdint.h>

#include "pto_orchestration_api.h"

#define FUNC_ADD 0
#define FUNC_ADD_SCALAR 1

static inline float set_blocks(CoreTaskArgs &args, int16_t n) {
#if defined(SRC_A5_RUNTIME_TENSORMAP_AND_RINGBUFFER_RUNTIME_PTO_TYPES_H_)
  args.launch_spec.set_core_num(n);
  return 1.0f;
#else
  args.launch_spec.set_block_num(n);
  return 2.0f;
#endif
}

extern "C" {

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const ChipTensor &a = orch_args.tensor(0).ref();
  const ChipTensor &b = orch_args.tensor(1).ref();
  const ChipTensor &out = orch_args.tensor(2).ref();
  uint32_t shapes[1] = {a.shapes[0]};
  TensorCreateInfo ci(shapes, 1, DataType::FLOAT32);
  CoreTaskArgs sum;
  sum.add_input(a, b);
  sum.add_output(ci);
  const float delta = set_blocks(sum, 2);
  TaskOutputTensors s = rt_submit_aiv_task(FUNC_ADD, sum);
  CoreTaskArgs plus;
  plus.add_input(s.get_ref(0));
  plus.add_output(out);
  plus.add_scalar(delta);
  rt_submit_aiv_task(FUNC_ADD_SCALAR, plus);
}

}  // extern "C"
