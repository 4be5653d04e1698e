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
  bool covered = false;
  for (const Entry& e : it->second.writers) {
    if (overlaps(probe, e.view, &covered)) return true;
  }
  if (!readers) return false;
  for (const Entry& e : it->second.readers) {
    if (overlaps(probe, e.view, &covered)) return true;
  }
  return false;
}

}  // namespace taskring::engine
