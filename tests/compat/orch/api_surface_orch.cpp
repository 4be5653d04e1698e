// Upstream-style orchestration touching the upstream API items that have a
// visible effect on a run (taskring compat suite). Entry arguments:
//   0 x     in    FP32[8]    (iota: 0..7)
//   1 y     out   FP32[8]
//   2 flags in    INT32[2]   ({1, 0}: predicate operands)
//   3 z     inout FP32[8]    (all 5)
//   4 bias  scalar float bits (10.0f)
// Expected: y = {4, 6, 8, 10, 14, 15, 16, 17}; z = {0, 1, 2, 3, 5, 5, 5, 5}.
// Kernels: 0 add, 1 add_scalar, 3 copy.
#include <stdint.h>

#include "pto_arg_with_deps.h"

#define FUNC_ADD 0
#define FUNC_ADD_SCALAR 1
#define FUNC_COPY 3

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(
    const ChipTaskArgs &orch_args) {
  (void)orch_args;
  return PTO2OrchestrationConfig{
      .expected_arg_count = 5,
  };
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const ChipTensor &x = orch_args.tensor(0).ref();
  const ChipTensor &y = orch_args.tensor(1).ref();
  const ChipTensor &flags = orch_args.tensor(2).ref();
  const ChipTensor &z = orch_args.tensor(3).ref();
  float bias = from_u64<float>(orch_args.scalar(0));

  if (get_element_size(x.dtype) != 4 || x.ndims != 1 || x.shapes[0] != 8) {
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "x must be FLOAT32[8], got %s", get_dtype_name(x.dtype));
    return;
  }
  LOG_INFO("api surface: x is %s, %d clusters, %d aiv", get_dtype_name(x.dtype), rt_available_cluster_count(),
           rt_available_aiv_count());

  PTO2_SCOPE_GUARD();
  uint32_t half[1] = {4};
  uint32_t at0[1] = {0};
  uint32_t at4[1] = {4};
  ChipTensor x_lo = x.view(half, at0, false);
  ChipTensor x_hi = x.view(half, at4);
  ChipTensor y_lo = y.view(half, at0);
  ChipTensor y_hi = y.view(half, at4);
  uint32_t square[2] = {2, 2};
  uint32_t flat[1] = {4};
  ChipTensor x_lo_2d = x_lo.reshape(square, 2, false);
  ChipTensor x_lo_flat = x_lo_2d.reshape(flat, 1);

  // y[0..4) = x[0..4) + x[4..8)
  CoreTaskArgs args;
  args.add_input(x_lo_flat, x_hi);
  args.add_output(y_lo);
  args.launch_spec.set_block_num(1);
  args.set_task_timing_slot(0);
  args.set_allow_early_resolve();
  args.dump(x_lo_flat);
  TaskOutputTensors add_outs = rt_submit_aiv_task(FUNC_ADD, args);
  PTO2TaskId add_id = add_outs.task_id();

  // y[4..8) = x[4..8) + bias; the container is reused after reset().
  args.reset();
  args.add_input(x_hi);
  args.add_output(y_hi);
  args.add_scalar(bias, (uint32_t)3);
  rt_submit_aiv_task(FUNC_ADD_SCALAR, args);

  // Predicated copies: flags[0] = 1 > 0 runs, flags[1] = 0 > 0 does not,
  // so z[4..8) keeps its previous contents.
  ChipTensor z_lo = z.view(half, at0);
  ChipTensor z_hi = z.view(half, at4);
  CoreTaskPredicate runs{};
  runs.operand.tensor = &flags;
  runs.operand.ndims = 1;
  runs.operand.indices[0] = 0;
  runs.op = PredicateOp::GT;
  runs.target = 0;
  CoreTaskPredicate skipped = runs;
  skipped.operand.indices[0] = 1;
  CoreTaskArgs copy_lo;
  copy_lo.add_input(x_lo);
  copy_lo.add_output(z_lo);
  copy_lo.set_predicate(runs);
  rt_submit_aiv_task(FUNC_COPY, copy_lo);
  CoreTaskArgs copy_hi;
  copy_hi.add_input(x_hi);
  copy_hi.add_output(z_hi);
  copy_hi.set_predicate(skipped);
  rt_submit_aiv_task(FUNC_COPY, copy_hi);

  // A dependency-only task after the add, through pto_arg_with_deps.h.
  CoreTaskArgsWithDeps<2> barrier;
  barrier.add_dep(add_id);
  TaskOutputTensors barrier_outs = rt_submit_dummy_task(barrier);
  if (!barrier_outs.task_id().is_valid()) rt_report_fatal(PTO2_ERROR_EXPLICIT_ORCH_FATAL, "dummy task not submitted");

  // The raw element bits (default T) of an INT32 entry tensor.
  uint32_t idx[1] = {0};
  uint64_t first_flag = get_tensor_data(flags, 1, idx);
  if (first_flag != 1) rt_report_fatal(PTO2_ERROR_EXPLICIT_ORCH_FATAL, "flags[0] read as %llu", (unsigned long long)first_flag);
}

}  // extern "C"
