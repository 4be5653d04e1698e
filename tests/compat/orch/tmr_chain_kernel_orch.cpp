// Twin of ../newest/tmr_chain_kernel_orch.cpp in the 6ebaf7715 spelling (taskring compat suite):
// the same orchestration with `pto_orchestration_api.h` and `PTO2_SCOPE_GUARD()`;
// the same entry symbol, tensors and results.
#include "pto_orchestration_api.h"

extern "C" void kernel_tmr_chain(const ChipTaskArgs &args) {
  PTO2_SCOPE_GUARD();
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
