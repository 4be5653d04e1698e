#include "dep_map.hpp"

namespace taskring::node {

void DepMap::reset() {
  map_.reset();
  used_ = 0;
}

tmr::TaskSlot* DepMap::slot(uint64_t index) {
  while (slots_.size() <= index) slots_.push_back(std::make_unique<tmr::TaskSlot>());
  return slots_[index].get();
}

void DepMap::add_task(uint64_t index, std::span<const ChipTensor> tensors, std::span<const TensorArgType> tags,
                      std::vector<uint64_t>* producers) {
  tmr::TaskSlot* s = slot(index);
  s->seq = next_seq_++;
  s->id = PTO2TaskId{index};
  s->completed_flag.store(false, std::memory_order_relaxed);
  used_ = index + 1;
  auto tracked = [&](size_t i) {
    return tags[i] != TensorArgType::NO_DEP && tensors[i].address_space == AddressSpace::HOST;
  };
  // Every lookup before any insert: a task never depends on itself.
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tracked(i)) continue;
    const bool writer = tags[i] != TensorArgType::INPUT;
    map_.for_each_dependency(tensors[i], writer, [&](tmr::TaskSlot* p) { producers->push_back(p->id.raw); });
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tracked(i)) continue;
    map_.insert(tensors[i], s, tags[i] != TensorArgType::INPUT);
  }
}

void DepMap::mark_completed(uint64_t index) {
  if (index < slots_.size()) slots_[index]->completed_flag.store(true, std::memory_order_release);
}

}  // namespace taskring::node
