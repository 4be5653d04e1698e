// BuildTracker: the dependency tracker of a graph built before any of its
// tasks runs (hbg's task image, a Graph recording): TensorMap's job when
// nothing completes during the build. Tasks are named by their index in the
// build, so no Owner records are needed and entries live until a writer
// replaces them; the rules are rules.hpp's, the same as TensorMap's.
//
// Each list keeps its entries sorted by the start of their byte ranges,
// the ranges in a vector of their own (16 bytes each, no descriptor to
// touch), and the longest range it ever held: an entry that overlaps a probe [lo, hi) starts in
// (lo - longest, hi), so a probe binary-searches that window and judges only
// the entries in it whose ranges intersect its own. A Graph recording or an
// hbg image whose tasks touch many disjoint slices of one buffer (a KV cache,
// a grid of tiles) used to scan every live entry per probe: 150 per probe on
// the decode recording, where the scan was 90 % of record time. Entries with
// an empty range meet nothing and are not kept.
//
// The buckets and their lists allocate from one monotonic arena, released
// as a whole by reset(): a build with a new buffer per task (every OUTPUT of
// a recording) costs a bump of a pointer per list growth, not a malloc and a
// free per node.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <unordered_map>
#include <vector>

#include "deps/rules.hpp"
#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::deps {

class BuildTracker {
 public:
  BuildTracker() = default;
  BuildTracker(const BuildTracker&) = delete;
  BuildTracker& operator=(const BuildTracker&) = delete;

  // Forgets every entry. The next build allocates from a buffer sized to
  // what the builds so far took, allocated once and kept: a steady series of
  // builds (one per run, one per recording) mallocs nothing and touches
  // memory that is already mapped.
  void reset();

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
    const Range r = range_of(t);
    if (r.lo == r.hi) return;  // an empty view meets nothing
    Bucket& b = buckets_[t.buffer.addr];
    (is_writer ? b.writers : b.readers).add(r, Entry{t, task});
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
    using allocator_type = std::pmr::polymorphic_allocator<std::byte>;
    explicit List(const allocator_type& a) : ranges(a), entries(a) {}
    List(const List& o, const allocator_type& a) : ranges(o.ranges, a), entries(o.entries, a), longest(o.longest) {}
    List(List&& o, const allocator_type& a)
        : ranges(std::move(o.ranges), a), entries(std::move(o.entries), a), longest(o.longest) {}

    std::pmr::vector<Range> ranges;  // sorted by lo; ranges[i] is entries[i]'s
    std::pmr::vector<Entry> entries;
    uint64_t longest = 0;  // the longest range ever added (never shrinks)

    void add(const Range& r, const Entry& e) {
      longest = std::max(longest, r.hi - r.lo);
      if (ranges.empty() || ranges.back().lo <= r.lo) {  // builds mostly add in address order
        ranges.push_back(r);
        entries.push_back(e);
        return;
      }
      const auto at =
          std::upper_bound(ranges.begin(), ranges.end(), r.lo, [](uint64_t lo, const Range& x) { return lo < x.lo; });
      const std::ptrdiff_t k = at - ranges.begin();
      ranges.insert(at, r);
      entries.insert(entries.begin() + k, e);
    }
    // The first position whose entry can overlap a range starting at `lo`.
    size_t window_begin(uint64_t lo) const {
      if (lo <= longest) return 0;
      return static_cast<size_t>(std::lower_bound(ranges.begin(), ranges.end(), lo - longest,
                                                  [](const Range& x, uint64_t v) { return x.lo < v; }) -
                                 ranges.begin());
    }
  };
  struct Bucket {
    using allocator_type = std::pmr::polymorphic_allocator<std::byte>;
    explicit Bucket(const allocator_type& a) : writers(a), readers(a) {}
    Bucket(const Bucket& o, const allocator_type& a) : writers(o.writers, a), readers(o.readers, a) {}
    Bucket(Bucket&& o, const allocator_type& a) : writers(std::move(o.writers), a), readers(std::move(o.readers), a) {}

    List writers, readers;
  };
  using Map = std::pmr::unordered_map<uint64_t, Bucket>;
  static Range range_of(const ChipTensor& t) {
    if (t.extent_elem_cache == 0) return Range{};
    const uint64_t lo = t.start_offset * t.elem_size();
    return Range{lo, lo + t.extent_bytes()};
  }
  static bool disjoint(const Range& a, const Range& b) {
    return a.hi <= b.lo || b.hi <= a.lo || a.lo == a.hi || b.lo == b.hi;
  }

  template <typename Fn>
  static void scan(List& list, const ChipTensor& probe, bool probe_is_writer, Fn& fn) {
    const Range pr = range_of(probe);
    if (pr.lo == pr.hi) return;
    const size_t begin = list.window_begin(pr.lo), n = list.ranges.size();
    size_t keep = begin, i = begin;
    for (; i < n && list.ranges[i].lo < pr.hi; ++i) {
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
    if (keep != i) {
      list.ranges.erase(list.ranges.begin() + static_cast<std::ptrdiff_t>(keep),
                        list.ranges.begin() + static_cast<std::ptrdiff_t>(i));
      list.entries.erase(list.entries.begin() + static_cast<std::ptrdiff_t>(keep),
                         list.entries.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  // Where the arena goes when its buffer is full; counts what it took.
  class Upstream final : public std::pmr::memory_resource {
   public:
    uint64_t taken = 0;

   private:
    void* do_allocate(size_t bytes, size_t align) override {
      taken += bytes;
      return std::pmr::new_delete_resource()->allocate(bytes, align);
    }
    void do_deallocate(void* p, size_t bytes, size_t align) override {
      std::pmr::new_delete_resource()->deallocate(p, bytes, align);
    }
    bool do_is_equal(const memory_resource& o) const noexcept override { return this == &o; }
  };

  // Declared in this order: the map goes first, then its arena, then what
  // the arena draws on.
  Upstream upstream_;
  std::unique_ptr<std::byte[]> buffer_;
  size_t buffer_bytes_ = 0;
  // The first build (no buffer yet) takes chunks of 32 KiB and up from
  // upstream_, not the resource's default of a few hundred bytes: a fresh
  // tracker's first build paid a memalign per small chunk.
  static constexpr size_t kFirstChunk = 32 * 1024;
  std::pmr::monotonic_buffer_resource arena_{kFirstChunk, &upstream_};
  Map buckets_{&arena_};
};

}  // namespace taskring::deps
