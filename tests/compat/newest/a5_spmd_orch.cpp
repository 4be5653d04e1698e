// Upstream-style a5 SPMD orchestration in upstream's newest spelling
// (taskring compat suite): the block-count setter is picked by the a5
// tensormap_and_ringbuffer runtime header's include guard, as upstream's
// fixtures that build on both a5 runtimes do (a5 tmr: set_core_num; a5
// host_build_graph: set_block_num). Built with `--arch a5` per runtime.
// Entry: a, b in FP32[N]; out FP32[N]. out = a + b + 1 on a5 tmr and
// a + b + 2 on a5 hbg, so the output names the branch that compiled.
#include <stdint.h>

#include "orchestration_api.h"  // NOLINT(build/include_subdir)

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
  const simpler::tmr::Tensor &a = orch_args.tensor(0).ref();
  const simpler::tmr::Tensor &b = orch_args.tensor(1).ref();
  const simpler::tmr::Tensor &out = orch_args.tensor(2).ref();
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
