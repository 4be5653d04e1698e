// Inline part of tensor_map.hpp (the lookup is on the submit hot path).
#pragma once

#include "task_state.hpp"

namespace taskring::tmr {

inline bool TensorMap::live(const Entry& e) {
  return e.task->seq == e.seq && !e.task->completed_flag.load(std::memory_order_acquire);
}

template <typename Fn>
void TensorMap::for_each_dependency(const ChipTensor& probe, bool probe_is_writer, Fn&& fn) {
  Bucket* b = find(probe.buffer.addr);
  if (b == nullptr) return;
  auto scan = [&](uint32_t* head, bool readers) {
    uint32_t* link = head;
    while (*link != kNil) {
      uint32_t i = *link;
      Entry& e = pool_[i];
      bool drop = false;
      if (!live(e)) {
        drop = true;
      } else {
        engine::Overlap o = engine::compute_overlap(probe, e.view);
        if (o != engine::Overlap::kNone) {
          fn(e.task);
          drop = probe_is_writer && o == engine::Overlap::kCovered;
        }
      }
      if (drop) {
        *link = e.next;
        free_entry(i);
        if (readers) --b->reader_count;
      } else {
        link = &e.next;
      }
    }
  };
  scan(&b->writers, false);
  if (probe_is_writer) scan(&b->readers, true);
}

}  // namespace taskring::tmr
