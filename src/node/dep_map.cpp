#include "dep_map.hpp"

namespace taskring::node {

void DepMap::reset() { map_.reset(); }

DepMap::Record* DepMap::record(uint64_t index) {
  while (records_.size() <= index) records_.emplace_back();
  return &records_[index];
}

void DepMap::add_task(uint64_t index, std::span<const ChipTensor> tensors, std::span<const TensorArgType> tags,
                      std::vector<uint64_t>* producers) {
  Record* r = record(index);
  r->seq = next_seq_++;
  r->id = PTO2TaskId{index};
  r->completed.store(false, std::memory_order_relaxed);
  auto tracked = [&](size_t i) {
    return tags[i] != TensorArgType::NO_DEP && tensors[i].address_space == AddressSpace::HOST;
  };
  // Every lookup before any insert: a task never depends on itself.
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tracked(i)) continue;
    const bool writer = tags[i] != TensorArgType::INPUT;
    map_.for_each_dependency(tensors[i], writer, [&](deps::Owner* p) { producers->push_back(p->id.raw); });
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tracked(i)) continue;
    map_.insert(tensors[i], r, tags[i] != TensorArgType::INPUT);
  }
}

void DepMap::mark_completed(uint64_t index) {
  if (index < records_.size()) records_[index].completed.store(true, std::memory_order_release);
}

}  // namespace taskring::node
