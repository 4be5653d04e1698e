// Twin of ../newest/graph_layers_orch.cpp in the 6ebaf7715 spelling (taskring compat suite):
// the same orchestration with `pto_orchestration_api.h`, `ChipTensor`, `PTO2TaskId`
// and `PTO2OrchestrationConfig`; the same entry, tensors and results.
#include <stdint.h>

#include <array>

#include "pto_orchestration_api.h"

#define FUNC_ADD 0
#define FUNC_ADD_SCALAR 1
#define FUNC_MUL 2

namespace {

void layer(const GraphTaskArgs &args, int variant) {
  const ChipTensor &a = args.tensor(0).ref();
  const ChipTensor &b = args.tensor(1).ref();
  const ChipTensor &output = args.tensor(2).ref();
  const std::array<uint32_t, 1> shape{a.shapes[0]};
  TensorCreateInfo intermediate(shape.data(), static_cast<uint32_t>(shape.size()), DataType::FLOAT32);

  CoreTaskArgs root_args;
  TaskOutputTensors root = rt_submit_dummy_task(root_args);

  CoreTaskArgs add_args;
  add_args.add_input(a, b);
  add_args.add_output(intermediate);
  const std::array<PTO2TaskId, 1> root_dep{root.task_id()};
  add_args.set_dependencies(root_dep.data(), static_cast<uint32_t>(root_dep.size()));
  TaskOutputTensors add_outputs = rt_submit_aiv_task(FUNC_ADD, add_args);
  ChipTensor sum = add_outputs.get_ref(0);

  CoreTaskArgs left_args;
  left_args.add_input(sum);
  left_args.add_output(intermediate);
  if (variant == 0) {
    left_args.add_scalar(args.scalar(0));
  } else {
    left_args.add_scalar(100.0F);
  }
  left_args.set_allow_early_resolve(true);
  TaskOutputTensors left_outputs = rt_submit_aiv_task(FUNC_ADD_SCALAR, left_args);
  ChipTensor left = left_outputs.get_ref(0);

  CoreTaskArgs right_args;
  right_args.add_input(sum);
  right_args.add_output(intermediate);
  right_args.add_scalar(args.scalar(variant == 0 ? 1 : 0));
  right_args.set_allow_early_resolve(true);
  TaskOutputTensors right_outputs = rt_submit_aiv_task(FUNC_ADD_SCALAR, right_args);
  ChipTensor right = right_outputs.get_ref(0);

  CoreTaskArgs mul_args;
  mul_args.add_input(left, right);
  mul_args.add_output(output);
  rt_submit_aiv_task(FUNC_MUL, mul_args);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &args) {
  (void)args;
  return PTO2OrchestrationConfig{.expected_arg_count = 5};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  const ChipTensor &a = args.tensor(0).ref();
  const ChipTensor &b = args.tensor(1).ref();
  const std::array<float, 3> left_deltas{1.0F, 4.0F, 5.0F};
  const std::array<float, 3> right_deltas{2.0F, 0.0F, 6.0F};
  const std::array<int, 3> variants{0, 1, 0};
  for (size_t i = 0; i < variants.size(); ++i) {
    GraphTaskArgs layer_args;
    layer_args.add_input(a, b);
    layer_args.add_output(args.tensor(static_cast<int32_t>(i) + 2).ref());
    if (variants[i] == 0) {
      layer_args.add_scalar(left_deltas[i], right_deltas[i]);
    } else {
      layer_args.add_scalar(left_deltas[i]);
    }
    rt_submit_graph(&layer, layer_args, variants[i]);
  }
}

}  // extern "C"
