// Twin of ../newest/chain_barrier_orch.cpp in the 6ebaf7715 spelling (taskring compat suite):
// the same orchestration with `pto_arg_with_deps.h`, `ChipTensor`, `PTO2TaskId` and
// `PTO2_ERROR_INVALID_ARGS`; the same entry, tensors and results.
#include <cstdint>

#include "pto_arg_with_deps.h"

#define FUNC_WRITE_CONST 0
#define FUNC_COPY_FIRST 1

static constexpr int32_t MAX_PRODUCERS = 600;

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &orch_args) {
  (void)orch_args;
  return PTO2OrchestrationConfig{.expected_arg_count = 3};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const ChipTensor &ext_X = orch_args.tensor(0).ref();
  const ChipTensor &ext_Y = orch_args.tensor(1).ref();
  const int32_t n = static_cast<int32_t>(orch_args.scalar(0));
  if (n < 1 || n > MAX_PRODUCERS) {
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "chain_barrier_orch: invalid n=%d", n);
    return;
  }

  static PTO2TaskId producer_ids[MAX_PRODUCERS];
  static DepFlags producer_kinds[MAX_PRODUCERS];
  for (int32_t i = 0; i < n; i++) {
    CoreTaskArgs args;
    args.add_inout(ext_X);
    producer_ids[i] = rt_submit_aic_task(FUNC_WRITE_CONST, args).task_id();
    producer_kinds[i] = (i % 2 == 0) ? DEP_WAIT : static_cast<DepFlags>(DEP_WAIT | DEP_RETAIN);
  }

  PTO2TaskId barrier_id;
  {
    CoreTaskArgs args;
    args.set_dependencies_with_kinds(producer_ids, producer_kinds, n);
    barrier_id = rt_submit_dummy_task(args).task_id();
  }
  {
    CoreTaskArgsWithDeps<1> args;
    args.add_dep_wait(barrier_id);
    args.add_input(ext_X);
    args.add_inout(ext_Y);
    rt_submit_aic_task(FUNC_COPY_FIRST, args);
  }
}

}  // extern "C"
