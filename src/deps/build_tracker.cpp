#include "deps/build_tracker.hpp"

namespace taskring::deps {

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
