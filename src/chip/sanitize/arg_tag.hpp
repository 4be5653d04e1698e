// The tag a task argument was submitted with, carried in its descriptor.
//
// Every runtime copies a task's argument descriptors when it accepts the
// task (tmr: into the task slot; hbg: into the run image; Graph: into the
// Definition's templates) and those copies are what the executor launches.
// The copy stamps the tag into the descriptor's first reserved byte (tag + 1;
// 0 = unknown), so the tag checker (tag_checker.hpp) sees it on every path
// without a side table: one byte store per argument, no branch.
#pragma once

#include <cstdint>
#include <optional>

#include "taskring/tensor/chip_tensor.hpp"
#include "taskring/tensor/task_args.hpp"

namespace taskring::sanitize {

inline void stamp_tag(ChipTensor& t, TensorArgType tag) {
  t.reserved[0] = static_cast<uint8_t>(static_cast<int>(tag) + 1);
}

inline std::optional<TensorArgType> stamped_tag(const ChipTensor& t) {
  if (t.reserved[0] == 0 || t.reserved[0] > static_cast<uint8_t>(TensorArgType::NO_DEP) + 1) return std::nullopt;
  return static_cast<TensorArgType>(t.reserved[0] - 1);
}

inline bool tag_writes(TensorArgType t) {
  return t == TensorArgType::OUTPUT || t == TensorArgType::OUTPUT_EXISTING || t == TensorArgType::INOUT;
}

}  // namespace taskring::sanitize
