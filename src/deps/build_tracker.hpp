// BuildTracker: the dependency tracker of a graph built before any of its
// tasks runs (hbg's task image, a Graph recording): TensorMap's job when
// nothing completes during the build. Tasks are named by their index in the
// build, so no Owner records are needed and entries live until a writer
// replaces them; the rules are rules.hpp's, the same as TensorMap's.
//
// Each list keeps the entries' byte ranges in a vector of their own: a probe
// first compares ranges (16 bytes per entry, no call) and judges only where
// they intersect, which is compute_overlap's own first test. A recording
// whose views share one buffer (a layered DAG over one grid) scans
// O(entries) per task either way; this makes each step a few instructions
// instead of a call that touches a 128-byte descriptor.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "deps/rules.hpp"
#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::deps {

class BuildTracker {
 public:
  void reset() { buckets_.clear(); }

  // Calls fn(task index) for every entry `probe` depends on (rules.hpp); a
  // writer probe also drops the entries it replaces.
  template <typename Fn>
  void for_each_dependency(const ChipTensor& probe, bool probe_is_writer, Fn&& fn) {
    auto it = buckets_.find(probe.buffer.addr);
    if (it == buckets_.end()) return;
    scan(it->second.writers, probe, probe_is_writer, fn);
    if (meets_readers(probe_is_writer)) scan(it->second.readers, probe, true, fn);
  }

  void insert(const ChipTensor& t, int32_t task, bool is_writer) {
    Bucket& b = buckets_[t.buffer.addr];
    List& l = is_writer ? b.writers : b.readers;
    l.ranges.push_back(range_of(t));
    l.entries.push_back(Entry{t, task});
  }

  // True when a writer entry (or, with `readers`, any entry) overlaps
  // `probe`: a task of this build writes (or touches) it.
  bool has_entry(const ChipTensor& probe, bool readers);

 private:
  // Bytes [lo, hi) from the buffer base that a view can touch; lo == hi
  // for an empty view (which overlaps nothing).
  struct Range {
    uint64_t lo = 0, hi = 0;
  };
  struct Entry {
    ChipTensor view;
    int32_t task;
  };
  struct List {
    std::vector<Range> ranges;  // ranges[i] is entries[i]'s
    std::vector<Entry> entries;
  };
  struct Bucket {
    List writers, readers;
  };
  static Range range_of(const ChipTensor& t) {
    if (t.extent_elem_cache == 0) return Range{};
    const uint64_t lo = t.start_offset * t.elem_size();
    return Range{lo, lo + t.extent_bytes()};
  }
  static bool disjoint(const Range& a, const Range& b) { return a.hi <= b.lo || b.hi <= a.lo || a.lo == a.hi || b.lo == b.hi; }

  template <typename Fn>
  static void scan(List& list, const ChipTensor& probe, bool probe_is_writer, Fn& fn) {
    const Range pr = range_of(probe);
    const size_t n = list.ranges.size();
    size_t keep = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!disjoint(pr, list.ranges[i])) {
        const Verdict v = judge(probe, probe_is_writer, list.entries[i].view);
        if (v.depends) fn(list.entries[i].task);
        if (v.replaces) continue;
      }
      if (keep != i) {
        list.ranges[keep] = list.ranges[i];
        list.entries[keep] = list.entries[i];
      }
      ++keep;
    }
    list.ranges.resize(keep);
    list.entries.resize(keep);
  }

  std::unordered_map<uint64_t, Bucket> buckets_;
};

}  // namespace taskring::deps
