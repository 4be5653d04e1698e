// DepMap: L3 dependency inference over host tensors, a thin adaptor on the
// L2 TensorMap (src/chip/tmr/tensor_map.hpp), so both levels apply one set
// of rules (RAW, WAW and WAR over buffer base + byte ranges; see that
// header) from one implementation.
//
// The TensorMap records tmr::TaskSlot pointers. Each L3 task gets a proxy
// slot from a pool reused across runs: `id.raw` carries the task's index in
// its run, `seq` a fresh number per use (so entries of an earlier use are
// dead), `completed_flag` is set when the task completes so later lookups
// skip it. Orchestrating thread only, except mark_completed (atomic store).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "tmr/task_state.hpp"
#include "tmr/tensor_map.hpp"
#include "taskring/tensor/task_args.hpp"

namespace taskring::node {

class DepMap {
 public:
  // Forgets every task (start of a run; no dependencies cross runs).
  void reset();

  // Appends to `producers` the index of every earlier task the task
  // `index` (the next index: 0, 1, 2, ... within the run) must wait for,
  // then records its accesses. NO_DEP tensors and DEVICE tensors are not
  // tracked. `producers` may hold duplicates.
  void add_task(uint64_t index, std::span<const ChipTensor> tensors, std::span<const TensorArgType> tags,
                std::vector<uint64_t>* producers);

  // Task `index` completed: later lookups no longer see it.
  void mark_completed(uint64_t index);

 private:
  tmr::TaskSlot* slot(uint64_t index);
  tmr::TensorMap map_{256};
  std::vector<std::unique_ptr<tmr::TaskSlot>> slots_;
  uint64_t used_ = 0;
  uint64_t next_seq_ = 1;
};

}  // namespace taskring::node
