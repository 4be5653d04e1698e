// Upstream-style orchestration that reads a config tensor on the
// orchestrator through data_as<T>() and re-wraps entry data from data_as
// with make_tensor_external, as upstream's bgemm benchmark and
// paged-attention sources do (taskring compat suite). Entry: cfg in
// INT32[2] = {repeats, step}; x in FP32[N]; y out FP32[N].
// y = x + repeats * step through a chain of add_scalar tasks (kernel 1) and
// a final copy (kernel 3).
#include <stdint.h>

#include "pto_orchestration_api.h"

#define FUNC_ADD_SCALAR 1
#define FUNC_COPY 3

extern "C" {

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const int32_t *cfg = orch_args.tensor(0).ref().data_as<int32_t>();
  const ChipTensor &x_in = orch_args.tensor(1).ref();
  const ChipTensor &y = orch_args.tensor(2).ref();
  const int32_t repeats = cfg[0];
  const float step = (float)cfg[1];
  LOG_INFO("config: %d repeats of +%d", cfg[0], cfg[1]);
  if (repeats < 1 || repeats > 64) {
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "config repeats %d outside 1..64", repeats);
    return;
  }
  uint32_t shapes[1] = {x_in.shapes[0]};
  ChipTensor x = make_tensor_external(x_in.data_as<void>(), shapes, 1, DataType::FLOAT32);
  TensorCreateInfo ci(shapes, 1, DataType::FLOAT32);
  PTO2_SCOPE() {
    CoreTaskArgs first;
    first.add_input(x);
    first.add_output(ci);
    first.add_scalar(step);
    TaskOutputTensors prev = rt_submit_aiv_task(FUNC_ADD_SCALAR, first);
    for (int32_t i = 1; i < repeats; ++i) {
      CoreTaskArgs next;
      next.add_input(prev.get_ref(0));
      next.add_output(ci);
      next.add_scalar(step);
      prev = rt_submit_aiv_task(FUNC_ADD_SCALAR, next);
    }
    CoreTaskArgs copy;
    copy.add_input(prev.get_ref(0));
    copy.add_output(y);
    rt_submit_aiv_task(FUNC_COPY, copy);
  }
}

}  // extern "C"
