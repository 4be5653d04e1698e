#include "deps/build_tracker.hpp"

#include <new>

namespace taskring::deps {

void BuildTracker::reset() {
  // An empty map holds nothing of the arena (no bucket array), so the arena
  // can be rebuilt under it; the map's allocator keeps pointing at arena_,
  // which is rebuilt at the same address. The grown buffer is allocated
  // first: if that throws, the tracker is still whole.
  buckets_ = Map(&arena_);
  std::unique_ptr<std::byte[]> grown;
  if (upstream_.taken != 0) grown.reset(new std::byte[buffer_bytes_ + upstream_.taken]);  // not value-initialised
  arena_.~monotonic_buffer_resource();  // returns what it took from upstream_
  if (grown != nullptr) {
    buffer_ = std::move(grown);
    buffer_bytes_ += upstream_.taken;
    upstream_.taken = 0;
  }
  if (buffer_bytes_ == 0) {
    new (&arena_) std::pmr::monotonic_buffer_resource(kFirstChunk, &upstream_);  // nothing taken yet
  } else {
    new (&arena_) std::pmr::monotonic_buffer_resource(buffer_.get(), buffer_bytes_, &upstream_);
  }
}

bool BuildTracker::has_entry(const ChipTensor& probe, bool readers) {
  auto it = buckets_.find(probe.buffer.addr);
  if (it == buckets_.end()) return false;
  const Range pr = range_of(probe);
  if (pr.lo == pr.hi) return false;
  auto any = [&](const List& l) {
    for (size_t i = l.window_begin(pr.lo); i < l.ranges.size() && l.ranges[i].lo < pr.hi; ++i) {
      if (!disjoint(pr, l.ranges[i]) && compute_overlap(probe, l.entries[i].view) != Overlap::kNone) return true;
    }
    return false;
  };
  if (any(it->second.writers)) return true;
  return readers && any(it->second.readers);
}

}  // namespace taskring::deps
