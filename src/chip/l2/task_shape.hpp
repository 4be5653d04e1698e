// The shape of a task: which core kinds one of its blocks occupies. Both
// runtimes keep one ready queue per shape and pop them in kPopOrder.
#pragma once

#include <cstdint>

#include "taskring/chip/orchestration_api.hpp"

namespace taskring::l2 {

enum class TaskShape : uint8_t { kAic = 0, kAiv = 1, kMix = 2, kDummy = 3 };
inline constexpr int kNumShapes = 4;

// Dummy tasks first (they only release consumers), then MIX (they need a
// whole cluster), then single-core tasks.
inline constexpr int kPopOrder[kNumShapes] = {static_cast<int>(TaskShape::kDummy), static_cast<int>(TaskShape::kMix),
                                              static_cast<int>(TaskShape::kAic), static_cast<int>(TaskShape::kAiv)};

// kDummy when no slot is active, kMix for two or more, else the one core kind.
inline TaskShape shape_of(const MixedKernels& k) {
  int aic = k.aic_kernel_id != INVALID_KERNEL_ID;
  int aiv = (k.aiv0_kernel_id != INVALID_KERNEL_ID) + (k.aiv1_kernel_id != INVALID_KERNEL_ID);
  if (aic + aiv == 0) return TaskShape::kDummy;
  if (aic + aiv >= 2) return TaskShape::kMix;
  return aic ? TaskShape::kAic : TaskShape::kAiv;
}

}  // namespace taskring::l2
