// Upstream-style many-to-one barrier in upstream's newest spelling (taskring
// compat suite): N producers of X, a dummy barrier task whose only
// dependencies are `set_dependencies_with_kinds` on every producer's
// `TaskId`, then a consumer that waits on the barrier through
// `CoreTaskArgsWithDeps<1>::add_dep_wait` (arg_with_deps.h) and copies X to
// Y. An N outside 1..MAX_PRODUCERS is reported with SIMPLER_ERROR_INVALID_ARGS.
// Twin: ../orch/chain_barrier_orch.cpp.
// Entry: X inout FP32[N], Y inout FP32[N]; scalar n. Kernels: 0 a producer
// that leaves X as it is ('noop'), 1 copy (X -> Y): Y ends equal to X.
#include <cstdint>

#include "arg_with_deps.h"  // NOLINT(build/include_subdir)

#define FUNC_WRITE_CONST 0
#define FUNC_COPY_FIRST 1

static constexpr int32_t MAX_PRODUCERS = 600;

extern "C" {

__attribute__((visibility("default"))) OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &orch_args) {
  (void)orch_args;
  return OrchestrationConfig{.expected_arg_count = 3};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const simpler::tmr::Tensor &ext_X = orch_args.tensor(0).ref();
  const simpler::tmr::Tensor &ext_Y = orch_args.tensor(1).ref();
  const int32_t n = static_cast<int32_t>(orch_args.scalar(0));
  if (n < 1 || n > MAX_PRODUCERS) {
    rt_report_fatal(SIMPLER_ERROR_INVALID_ARGS, "chain_barrier_orch: invalid n=%d", n);
    return;
  }

  static TaskId producer_ids[MAX_PRODUCERS];
  static DepFlags producer_kinds[MAX_PRODUCERS];
  for (int32_t i = 0; i < n; i++) {
    CoreTaskArgs args;
    args.add_inout(ext_X);
    producer_ids[i] = rt_submit_aic_task(FUNC_WRITE_CONST, args).task_id();
    producer_kinds[i] = (i % 2 == 0) ? DEP_WAIT : (DEP_WAIT | DEP_RETAIN);
  }

  TaskId barrier_id;
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
