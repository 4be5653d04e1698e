#include "dep_tracker.hpp"

#include "overlap.hpp"

namespace taskring::engine {

bool DepTracker::overlaps(const ChipTensor& probe, const ChipTensor& entry, bool* covered) {
  Overlap o = compute_overlap(probe, entry);
  *covered = o == Overlap::kCovered;
  return o != Overlap::kNone;
}

bool DepTracker::has_entry(const ChipTensor& probe, bool readers) {
  auto it = buckets_.find(probe.buffer.addr);
  if (it == buckets_.end()) return false;
  const Range pr = range_of(probe);
  bool covered = false;
  auto any = [&](const List& l) {
    for (size_t i = 0; i < l.ranges.size(); ++i) {
      if (!disjoint(pr, l.ranges[i]) && overlaps(probe, l.entries[i].view, &covered)) return true;
    }
    return false;
  };
  if (any(it->second.writers)) return true;
  return readers && any(it->second.readers);
}

}  // namespace taskring::engine
