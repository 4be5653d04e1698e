// Inline part of tensor_map.hpp (the lookup is on the submit hot path).
#pragma once

namespace taskring::deps {

inline bool TensorMap::live(const Entry& e) {
  return e.owner->seq == e.seq && !e.owner->completed.load(std::memory_order_acquire);
}

template <typename Fn>
void TensorMap::for_each_dependency(const ChipTensor& probe, bool probe_is_writer, Fn&& fn) {
  Bucket* b = find(probe.buffer.addr);
  if (b == nullptr) return;
  auto visit = [&](Entry& e) {  // true: drop the entry
    if (!live(e)) return true;
    const Verdict v = judge(probe, probe_is_writer, e.view);
    if (v.depends) fn(e.owner);
    return v.replaces;
  };
  if (b->index) {
    WriterIndex& x = *b->index;
    const uint64_t lo = first_byte(probe), hi = lo + probe.extent_bytes();
    StartIndex& ix = x.by_start;
    for (StartIndex::Pos it = ix.lower_bound(lo > x.max_span ? lo - x.max_span : 0);
         !ix.at_end(it) && ix.key(it) < hi;) {
      if (ix.end_byte(it) <= lo) {  // ends before the probe: no need to touch the entry
        it = ix.next(it);
        continue;
      }
      const uint32_t i = ix.entry(it);
      if (visit(pool_[i])) {
        free_entry(i);
        it = ix.erase(it);
        --b->writer_count;
      } else {
        it = ix.next(it);
      }
    }
  }
  auto scan = [&](uint32_t* head, bool readers) {
    uint32_t* link = head;
    while (*link != kNil) {
      uint32_t i = *link;
      Entry& e = pool_[i];
      if (visit(e)) {
        *link = e.next;
        free_entry(i);
        --(readers ? b->reader_count : b->writer_count);
      } else {
        link = &e.next;
      }
    }
  };
  if (!b->index) scan(&b->writers, false);
  if (meets_readers(probe_is_writer)) scan(&b->readers, true);
}

}  // namespace taskring::deps
