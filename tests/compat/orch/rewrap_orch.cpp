// Upstream-style orchestration that re-wraps entry data with
// make_tensor_external and the default address space, as upstream's
// paged-attention sources do (taskring compat suite). Entry: src in FP32[N],
// dst out FP32[N]; dst = src through kernel 3 (copy).
#include <stdint.h>

#include "pto_orchestration_api.h"

#define FUNC_COPY 3

extern "C" {

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const ChipTensor &src_in = orch_args.tensor(0).ref();
  const ChipTensor &dst_in = orch_args.tensor(1).ref();
  uint32_t shapes[1] = {src_in.shapes[0]};
  ChipTensor src = make_tensor_external(src_in.data_as<void>(), shapes, 1, DataType::FLOAT32);
  ChipTensor dst = make_tensor_external(dst_in.data_as<void>(), shapes, 1, DataType::FLOAT32, false, 0);
  CoreTaskArgs args;
  args.add_input(src);
  args.add_output(dst);
  rt_submit_aiv_task(FUNC_COPY, args);
}

}  // extern "C"
