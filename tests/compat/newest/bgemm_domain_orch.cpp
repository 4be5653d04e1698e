// Upstream-style grouped GEMM-accumulate in upstream's newest spelling
// (taskring compat suite; after upstream's benchmark bgemm): one
// `SIMPLER_SCOPE_GUARD()` per group, the group's tasks tagged with a
// `TaskDomain` (`set_task_domain`), tensor views per tile.
// Twin: ../orch/bgemm_groups_orch.cpp.
// Entry: A, B in FP32[groups*grid_k*T], C inout FP32[groups*T]; scalars
// grid_k, groups. Per group and k: g = A_k * B_k (elementwise 'mul' for the
// tile GEMM), C_group += g ('add'). With A = 2, B = 3, C = 0: C = 6 * grid_k.
#include <stddef.h>
#include <stdint.h>

#include "orchestration_api.h"  // NOLINT(build/include_subdir)

#define FUNC_GEMM_TILE 0
#define FUNC_TILE_ADD 1

extern "C" {

__attribute__((visibility("default"))) OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &orch_args) {
  (void)orch_args;
  return OrchestrationConfig{.expected_arg_count = 5};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const simpler::tmr::Tensor &ext_A = orch_args.tensor(0).ref();
  const simpler::tmr::Tensor &ext_B = orch_args.tensor(1).ref();
  const simpler::tmr::Tensor &ext_C = orch_args.tensor(2).ref();
  const int grid_k = orch_args.scalar<int32_t>(0);
  const int num_groups = orch_args.scalar<int32_t>(1);
  if (grid_k < 1 || num_groups < 1 || ext_C.shapes[0] % static_cast<uint32_t>(num_groups) != 0) {
    rt_report_fatal(SIMPLER_ERROR_INVALID_ARGS, "bgemm: grid_k %d, groups %d", grid_k, num_groups);
    return;
  }
  const uint32_t group_elems = ext_C.shapes[0] / static_cast<uint32_t>(num_groups);
  uint32_t group_shapes[1] = {group_elems};
  TensorCreateInfo group_ci(group_shapes, 1, DataType::FLOAT32);

  for (int group_idx = 0; group_idx < num_groups; group_idx++) {
    TaskDomain group_domain = (group_idx & 1) == 0 ? TaskDomain::DIE0 : TaskDomain::DIE1;
    SIMPLER_SCOPE_GUARD();
    uint32_t c_offsets[1] = {static_cast<uint32_t>(group_idx) * group_elems};
    simpler::tmr::Tensor C_view = ext_C.view(group_shapes, c_offsets);
    for (int k_idx = 0; k_idx < grid_k; k_idx++) {
      uint32_t ab_offsets[1] = {static_cast<uint32_t>(group_idx * grid_k + k_idx) * group_elems};
      simpler::tmr::Tensor A_view = ext_A.view(group_shapes, ab_offsets);
      simpler::tmr::Tensor B_view = ext_B.view(group_shapes, ab_offsets);

      CoreTaskArgs params_gemm;
      params_gemm.set_task_domain(group_domain);
      params_gemm.add_input(A_view, B_view);
      params_gemm.add_output(group_ci);
      TaskOutputTensors gemm_outs = rt_submit_aic_task(FUNC_GEMM_TILE, params_gemm);

      CoreTaskArgs params_add;
      params_add.set_task_domain(group_domain);
      params_add.add_input(C_view, gemm_outs.get_ref(0));
      params_add.add_inout(C_view);
      rt_submit_aiv_task(FUNC_TILE_ADD, params_add);
    }
  }
}

}  // extern "C"
