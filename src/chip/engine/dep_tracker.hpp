// DepTracker: the host-side TensorMap of a run that is built before any task
// executes (hbg's task image, a Graph recording). Nothing completes during
// the build, so entries carry task indices and live until a writer covers
// them.
//
// Per buffer base address it keeps writers (INOUT, OUTPUT_EXISTING) and
// readers (INPUT) apart: a reader depends on overlapping writers (RAW), a
// writer on overlapping writers and readers (WAW, WAR). A writer removes the
// entries its region covers (it now stands for them). Overlap is
// compute_overlap (overlap.hpp): exact on one row-major lattice, conservative
// otherwise, so a dependency is never dropped.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::engine {

class DepTracker {
 public:
  void reset() { buckets_.clear(); }

  // Calls fn(task index) for every entry `probe` depends on; a writer probe
  // also drops the entries it covers.
  template <typename Fn>
  void for_each_dependency(const ChipTensor& probe, bool probe_is_writer, Fn&& fn) {
    auto it = buckets_.find(probe.buffer.addr);
    if (it == buckets_.end()) return;
    scan(it->second.writers, probe, probe_is_writer, fn);
    if (probe_is_writer) scan(it->second.readers, probe, true, fn);
  }

  void insert(const ChipTensor& t, int32_t task, bool is_writer) {
    Bucket& b = buckets_[t.buffer.addr];
    (is_writer ? b.writers : b.readers).push_back(Entry{t, task});
  }

  // True when a writer entry (or, with `readers`, any entry) overlaps
  // `probe`: a task of this build writes (or touches) it.
  bool has_entry(const ChipTensor& probe, bool readers);

 private:
  struct Entry {
    ChipTensor view;
    int32_t task;
  };
  struct Bucket {
    std::vector<Entry> writers, readers;
  };
  static bool overlaps(const ChipTensor& probe, const ChipTensor& entry, bool* covered);

  template <typename Fn>
  static void scan(std::vector<Entry>& list, const ChipTensor& probe, bool remove_covered, Fn& fn) {
    size_t keep = 0;
    for (size_t i = 0; i < list.size(); ++i) {
      bool covered = false;
      bool hit = overlaps(probe, list[i].view, &covered);
      if (hit) fn(list[i].task);
      if (hit && covered && remove_covered) continue;
      if (keep != i) list[keep] = list[i];
      ++keep;
    }
    list.resize(keep);
  }

  std::unordered_map<uint64_t, Bucket> buckets_;
};

}  // namespace taskring::engine
