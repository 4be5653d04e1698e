// Twin of ../newest/manual_scope_orch.cpp in the 6ebaf7715 spelling (taskring compat suite):
// the same orchestration with `PTO2_SCOPE(PTO2ScopeMode::MANUAL)`, `PTO2ScopeGuard`
// and `PTO2TaskId` (no task domain); the same entry, tensors and results.
#include <stdint.h>

#include "pto_orchestration_api.h"

#define FUNC_ADD 0
#define FUNC_ADD_SCALAR 1

extern "C" {

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const ChipTensor &a = orch_args.tensor(0).ref();
  const ChipTensor &b = orch_args.tensor(1).ref();
  const ChipTensor &out = orch_args.tensor(2).ref();
  uint32_t shapes[1] = {a.shapes[0]};
  TensorCreateInfo ci(shapes, 1, DataType::FLOAT32);

  CoreTaskArgs alloc_args;
  alloc_args.add_output(ci);
  TaskOutputTensors tmp = alloc_tensors(alloc_args);
  const ChipTensor &sum = tmp.get_ref(0);

  PTO2ScopeGuard outer(PTO2ScopeMode::AUTO);
  PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
    CoreTaskArgsWithDeps<2> add;
    add.add_input(a, b);
    add.add_output(sum);
    add.add_dep(tmp.task_id());
    const PTO2TaskId add_id = rt_submit_aiv_task(FUNC_ADD, add).task_id();

    CoreTaskArgsWithDeps<2> plus;
    plus.add_input(sum);
    plus.add_output(out);
    plus.add_scalar(1.0f);
    plus.add_dep(add_id);
    rt_submit_aiv_task(FUNC_ADD_SCALAR, plus);
  }
}

}  // extern "C"
