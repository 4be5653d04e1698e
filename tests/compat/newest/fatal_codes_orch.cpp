// Upstream-style error-path orchestration in upstream's newest spelling
// (taskring compat suite): the case is chosen by scalar 0 and named by its
// SIMPLER_ERROR_* code. Twin: ../orch/fatal_codes_orch.cpp.
//   9 rt_report_fatal(SIMPLER_ERROR_EXPLICIT_ORCH_FATAL, ...)
//   7 a require_sync_start task with more blocks than the chip has cores
//   5 an argument container with a latched error (a tensor after a scalar)
//   2 an OUTPUT larger than the heap ring (run with --ring-heap 1024)
// Entry: t inout FP32[N]; scalar case.
#include <stdint.h>

#include "orchestration_api.h"  // NOLINT(build/include_subdir)

#define FUNC_ADD 0

extern "C" {

__attribute__((visibility("default"))) OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &orch_args) {
  (void)orch_args;
  return OrchestrationConfig{.expected_arg_count = 2};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const simpler::tmr::Tensor &t = orch_args.tensor(0).ref();
  const int32_t which = orch_args.scalar<int32_t>(0);
  if (which == SIMPLER_ERROR_EXPLICIT_ORCH_FATAL) {
    rt_report_fatal(SIMPLER_ERROR_EXPLICIT_ORCH_FATAL, "explicit fatal requested (case %d)", which);
  } else if (which == SIMPLER_ERROR_REQUIRE_SYNC_START_INVALID) {
    CoreTaskArgs args;
    args.add_input(t, t);
    args.add_output(t);
    args.launch_spec.set_block_num(4096);
    args.launch_spec.set_require_sync_start(true);
    rt_submit_aiv_task(FUNC_ADD, args);
  } else if (which == SIMPLER_ERROR_HEAP_RING_DEADLOCK) {
    uint32_t big[1] = {8192};  // 32 KiB of FP32
    TensorCreateInfo ci(big, 1, DataType::FLOAT32);
    alloc_tensors(ci);
  } else if (which == SIMPLER_ERROR_INVALID_ARGS) {
    CoreTaskArgs args;
    args.add_scalar((uint64_t)1);
    args.add_input(t);  // a tensor after a scalar: latched error
    rt_submit_aiv_task(FUNC_ADD, args);
  }
  if (rt_is_fatal()) LOG_ERROR("case %d latched a fatal error", which);
}

}  // extern "C"
