// Twin of ../newest/bgemm_domain_orch.cpp in the 6ebaf7715 spelling (taskring compat suite):
// the same orchestration with `PTO2_SCOPE_GUARD()` and `ChipTensor`, and without the
// task domains (6ebaf7715 has none); the same entry, tensors and results.
#include <stddef.h>
#include <stdint.h>

#include "pto_orchestration_api.h"

#define FUNC_GEMM_TILE 0
#define FUNC_TILE_ADD 1

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &orch_args) {
  (void)orch_args;
  return PTO2OrchestrationConfig{.expected_arg_count = 5};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const ChipTensor &ext_A = orch_args.tensor(0).ref();
  const ChipTensor &ext_B = orch_args.tensor(1).ref();
  const ChipTensor &ext_C = orch_args.tensor(2).ref();
  const int grid_k = static_cast<int>(orch_args.scalar(0));
  const int num_groups = static_cast<int>(orch_args.scalar(1));
  if (grid_k < 1 || num_groups < 1 || ext_C.shapes[0] % static_cast<uint32_t>(num_groups) != 0) {
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "bgemm: grid_k %d, groups %d", grid_k, num_groups);
    return;
  }
  const uint32_t group_elems = ext_C.shapes[0] / static_cast<uint32_t>(num_groups);
  uint32_t group_shapes[1] = {group_elems};
  TensorCreateInfo group_ci(group_shapes, 1, DataType::FLOAT32);

  for (int group_idx = 0; group_idx < num_groups; group_idx++) {
    PTO2_SCOPE_GUARD();
    uint32_t c_offsets[1] = {static_cast<uint32_t>(group_idx) * group_elems};
    ChipTensor C_view = ext_C.view(group_shapes, c_offsets);
    for (int k_idx = 0; k_idx < grid_k; k_idx++) {
      uint32_t ab_offsets[1] = {static_cast<uint32_t>(group_idx * grid_k + k_idx) * group_elems};
      ChipTensor A_view = ext_A.view(group_shapes, ab_offsets);
      ChipTensor B_view = ext_B.view(group_shapes, ab_offsets);

      CoreTaskArgs params_gemm;
      params_gemm.add_input(A_view, B_view);
      params_gemm.add_output(group_ci);
      TaskOutputTensors gemm_outs = rt_submit_aic_task(FUNC_GEMM_TILE, params_gemm);

      CoreTaskArgs params_add;
      params_add.add_input(C_view, gemm_outs.get_ref(0));
      params_add.add_inout(C_view);
      rt_submit_aiv_task(FUNC_TILE_ADD, params_add);
    }
  }
}

}  // extern "C"
