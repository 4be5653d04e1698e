// Upstream-style manual scope in upstream's newest spelling (taskring compat
// suite): inside `SIMPLER_SCOPE(ScopeMode::MANUAL)` tensors carry no
// automatic dependencies, so every edge is an explicit `TaskId`
// (`CoreTaskArgsWithDeps<2>::add_dep`); an AUTO `ScopeGuard` object with a
// `TaskDomain` wraps the manual scope. Twin: ../orch/manual_scope_orch.cpp.
// Entry: a, b in FP32[N], out FP32[N]: out = (a + b) + 1 (= 6 for 2 and 3).
#include <stdint.h>

#include "orchestration_api.h"  // NOLINT(build/include_subdir)

#define FUNC_ADD 0
#define FUNC_ADD_SCALAR 1

extern "C" {

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const simpler::tmr::Tensor &a = orch_args.tensor(0).ref();
  const simpler::tmr::Tensor &b = orch_args.tensor(1).ref();
  const simpler::tmr::Tensor &out = orch_args.tensor(2).ref();
  uint32_t shapes[1] = {a.shapes[0]};
  TensorCreateInfo ci(shapes, 1, DataType::FLOAT32);

  CoreTaskArgs alloc_args;
  alloc_args.add_output(ci);
  TaskOutputTensors tmp = alloc_tensors(alloc_args);
  const simpler::tmr::Tensor &sum = tmp.get_ref(0);

  ScopeGuard outer(ScopeMode::AUTO, TaskDomain::DIE0);
  SIMPLER_SCOPE(ScopeMode::MANUAL) {
    CoreTaskArgsWithDeps<2> add;
    add.add_input(a, b);
    add.add_output(sum);
    add.add_dep(tmp.task_id());
    const TaskId add_id = rt_submit_aiv_task(FUNC_ADD, add).task_id();

    CoreTaskArgsWithDeps<2> plus;
    plus.add_input(sum);
    plus.add_output(out);
    plus.add_scalar(1.0f);
    plus.add_dep(add_id);
    rt_submit_aiv_task(FUNC_ADD_SCALAR, plus);
  }
}

}  // extern "C"
