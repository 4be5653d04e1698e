// Upstream-style SPMD orchestration with require_sync_start in upstream's
// newest spelling (taskring compat suite): one AIC task with one block per
// cluster, all starting together; its kernel (func id 0) meets at an
// in-kernel barrier. Twin: ../orch/sync_start_orch.cpp.
// Entry: sync inout UINT32[1], shared inout INT32[N], out INT32[N].
#include <stdint.h>

#include "orchestration_api.h"  // NOLINT(build/include_subdir)

#define FUNC_BARRIER_SUM 0

extern "C" {

__attribute__((visibility("default"))) OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &orch_args) {
  (void)orch_args;
  return OrchestrationConfig{.expected_arg_count = 3};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const simpler::tmr::Tensor &sync = orch_args.tensor(0).ref();
  const simpler::tmr::Tensor &shared = orch_args.tensor(1).ref();
  const simpler::tmr::Tensor &out = orch_args.tensor(2).ref();
  int16_t blocks = static_cast<int16_t>(rt_available_cluster_count());
  if (static_cast<uint32_t>(blocks) > out.shapes[0]) blocks = static_cast<int16_t>(out.shapes[0]);
  SIMPLER_SCOPE() {
    CoreTaskArgs task;
    task.add_inout(sync, shared);
    task.add_output(out);
    task.launch_spec.set_block_num(blocks);
    task.launch_spec.set_require_sync_start(true);
    rt_submit_aic_task(FUNC_BARRIER_SUM, task);
  }
}

}  // extern "C"
