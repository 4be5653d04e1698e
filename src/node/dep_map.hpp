// DepMap: L3 (and L4) dependency inference over host tensors, a thin adaptor
// on the one dependency component (src/deps): every level applies one set of
// rules (deps/rules.hpp) from one implementation (deps/tensor_map.hpp).
//
// Each node task is one deps::Owner record (24 bytes, not a chip runtime's
// task slot) from a pool reused across runs: `id.raw` carries the task's
// index in its run, `seq` a fresh number per use (so entries of an earlier
// use are dead), `completed` is set when the task completes so later lookups
// skip it. Not thread-safe: add_task may grow the pool while mark_completed
// indexes it, so callers serialise the two (the engine holds its mutex).
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "deps/owner.hpp"
#include "deps/tensor_map.hpp"
#include "taskring/tensor/task_args.hpp"

namespace taskring::node {

class DepMap {
 public:
  // What the map keeps per task, and all it keeps besides its TensorMap.
  using Record = deps::Owner;

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

  // Owner records held (the most tasks of any run so far).
  size_t record_count() const { return records_.size(); }

 private:
  Record* record(uint64_t index);
  deps::TensorMap map_{256};
  // A deque: records never move (the TensorMap holds their addresses) and
  // growing allocates one block per few records.
  std::deque<Record> records_;
  uint64_t next_seq_ = 1;
};

}  // namespace taskring::node
