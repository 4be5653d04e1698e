// Upstream-style orchestration under its own entry name in upstream's newest
// spelling (taskring compat suite; after upstream's kernel-mode capture
// fixtures): `extern "C" void kernel_tmr_chain(const ChipTaskArgs &)` with a
// `SIMPLER_SCOPE_GUARD()` over the whole body and no config symbol
// (`taskring orch --entry kernel_tmr_chain`). Twin:
// ../orch/tmr_chain_kernel_orch.cpp.
// Entry: in in FP32[N], out out FP32[N]; scalar step (f32 bits): 16 chained
// add_scalar tasks, out = in + 16 * step.
#include "orchestration_api.h"  // NOLINT(build/include_subdir)

extern "C" void kernel_tmr_chain(const ChipTaskArgs &args) {
  SIMPLER_SCOPE_GUARD();
  uint32_t shape[] = {args.tensor(0).ref().shapes[0]};
  TensorCreateInfo intermediate(shape, 1, DataType::FLOAT32);
  TaskOutputTensors previous;
  for (int step = 0; step < 16; ++step) {
    CoreTaskArgs task;
    task.add_input(step == 0 ? args.tensor(0).ref() : previous.get_ref(0));
    if (step == 15) {
      task.add_output(args.tensor(1).ref());
    } else {
      task.add_output(intermediate);
    }
    task.add_scalar(args.scalar(0));
    TaskOutputTensors next = rt_submit_aiv_task(0, task);
    if (step < 15) previous = next;
  }
}
