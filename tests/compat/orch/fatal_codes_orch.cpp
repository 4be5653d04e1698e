// Upstream-style error-path orchestration (taskring compat suite). The case
// is chosen by scalar 0:
//   9 rt_report_fatal(PTO2_ERROR_EXPLICIT_ORCH_FATAL, ...)
//   7 a require_sync_start task with more blocks than the chip has cores
//   2 an OUTPUT larger than the heap ring (run with PTO2_RING_HEAP=1024)
//   5 an argument container with a latched error
//   90 always_assert(false-condition) (code 9, like an explicit fatal)
//   3 nested scopes 4..8 sharing the last ring fill its task window together
//     (run with PTO2_RING_TASK_WINDOW=4; tmr only)
// Entry: t inout FP32[N]; scalar case.
#include <stdint.h>

#include "pto_orchestration_api.h"

#define FUNC_ADD 0

// One task per scope level from depth 4 on (the entry runs in scope 1), so
// the last ring holds tasks of several open scopes and none holds a window.
static void nest(const ChipTensor &t, int depth) {
  if (depth > 8) return;
  PTO2_SCOPE() {
    if (depth >= 4) {
      CoreTaskArgs args;
      args.add_input(t, t);
      args.add_output(t);
      rt_submit_aiv_task(FUNC_ADD, args);
    }
    nest(t, depth + 1);
  }
}

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(
    const ChipTaskArgs &orch_args) {
  (void)orch_args;
  return PTO2OrchestrationConfig{
      .expected_arg_count = 2,
  };
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const ChipTensor &t = orch_args.tensor(0).ref();
  const int64_t which = (int64_t)orch_args.scalar(0);
  if (which == PTO2_ERROR_EXPLICIT_ORCH_FATAL) {
    rt_report_fatal(PTO2_ERROR_EXPLICIT_ORCH_FATAL, "explicit fatal requested (case %lld)", (long long)which);
  } else if (which == PTO2_ERROR_REQUIRE_SYNC_START_INVALID) {
    CoreTaskArgs args;
    args.add_input(t, t);
    args.add_output(t);
    args.launch_spec.set_block_num(4096);
    args.launch_spec.set_require_sync_start(true);
    rt_submit_aiv_task(FUNC_ADD, args);
  } else if (which == PTO2_ERROR_HEAP_RING_DEADLOCK) {
    uint32_t big[1] = {8192};  // 32 KiB of FP32
    TensorCreateInfo ci(big, 1, DataType::FLOAT32);
    alloc_tensors(ci);
  } else if (which == PTO2_ERROR_FLOW_CONTROL_DEADLOCK) {
    nest(t, 2);
  } else if (which == 90) {
    SPIN_WAIT_HINT();
    always_assert(t.shapes[0] > 0);  // holds
    always_assert(t.ndims == 7);     // fails
  } else if (which == PTO2_ERROR_INVALID_ARGS) {
    CoreTaskArgs args;
    args.add_scalar((uint64_t)1);
    args.add_input(t);  // a tensor after a scalar: latched error
    rt_submit_aiv_task(FUNC_ADD, args);
  }
}

}  // extern "C"
