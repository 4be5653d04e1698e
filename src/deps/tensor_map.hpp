// TensorMap: finds the earlier tasks a new task must wait for, from the byte
// ranges its tensors cover, while earlier tasks run and complete. Used by
// every level that submits into a running graph: tmr (L2) and DepMap (L3, L4).
//
// Keyed by buffer base address: every view of one buffer lands in one bucket
// that keeps writers and readers apart, so a reader scans only writers while
// a writer scans both; what a probe does with an entry it meets is rules.hpp
// (RAW, WAW, WAR; a covering writer replaces the entry). Entries name their
// task by its Owner record (owner.hpp) and the owner's seq at insert; an
// entry whose owner was reused or completed is dead and dropped lazily.
// Single-threaded: only the submitting thread touches it (owners complete on
// other threads; their flag is atomic).
//
// Many live views of one buffer: once a bucket holds more than
// kIndexWriters writer entries, its writers move from the chain into an
// index ordered by first byte (with the largest extent seen; a two-level
// sorted array, start_index.hpp), so a probe visits only the writers whose
// byte range can reach it instead of all of them: submit cost stops growing
// with the number of live disjoint writer views (issue 12, goal 2). Readers
// stay chained (a reader probe never scans them; a writer probe scans them
// for WAR).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "deps/owner.hpp"
#include "deps/rules.hpp"
#include "deps/start_index.hpp"
#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::deps {

class TensorMap {
 public:
  // `initial_buckets` is rounded up to a power of two; the table grows.
  explicit TensorMap(uint64_t initial_buckets = 4096);

  // Forgets every entry (start of a run).
  void reset();

  // Calls `fn(Owner*)` for every live entry `probe` depends on (rules.hpp);
  // a writer probe also removes the entries it replaces. `fn` may see one
  // owner more than once (one call per entry).
  template <typename Fn>
  void for_each_dependency(const ChipTensor& probe, bool probe_is_writer, Fn&& fn);

  // Records an access of `owner`'s task (its current seq) to `t`. The owner
  // must outlive the map's next reset() or its reuse under a new seq.
  void insert(const ChipTensor& t, Owner* owner, bool is_writer);

  uint64_t live_entries_hint() const { return entries_; }

  // Home slot of a buffer base in a table of 2^(64 - shift) slots:
  // Fibonacci hashing, the product's top bits. Its low bits would depend
  // only on the address's low bits, so buffers 1 KiB to 1 MiB apart (heap
  // outputs of one size) shared a few home slots and probed one cluster
  // (bench_deps' independent pattern: 141 -> 18 ns per access); the top
  // bits spread strided and consecutive addresses alike.
  static uint64_t home_of(uint64_t base, uint32_t shift) { return ((base >> 6) * 0x9E3779B97F4A7C15ull) >> shift; }

 private:
  static constexpr uint32_t kNil = UINT32_MAX;
  // Entries live in one pool and are chained per bucket by index, so a
  // submit allocates nothing once the pool has warmed up.
  struct Entry {
    Footprint view;
    Owner* owner;
    uint64_t seq;  // owner->seq at insert
    uint32_t next;
  };
  // Writers of a large bucket: first byte -> entry (start_index.hpp), and
  // the largest byte extent among them (every entry that can overlap
  // [lo, hi) starts in [lo - max_span, hi)).
  struct WriterIndex {
    StartIndex by_start;
    uint64_t max_span = 0;
  };
  static constexpr uint32_t kIndexWriters = 32;
  struct Bucket {
    uint64_t base = 0;
    bool used = false;
    uint32_t writers = kNil;  // chain, while `index` is null
    uint32_t readers = kNil;
    uint32_t writer_count = 0;
    uint32_t reader_count = 0;
    uint32_t reader_purge_at = 16;
    std::unique_ptr<WriterIndex> index;
  };

  void resize_table(uint64_t capacity);  // empty table of `capacity` (a power of two) slots
  Bucket* find(uint64_t base);
  Bucket& find_or_add(uint64_t base);
  Bucket& add(uint64_t base);  // a new bucket for `base` (find_or_add's miss)
  void grow();
  static bool live(const Entry& e);
  uint32_t new_entry();
  uint32_t new_pool_entry();  // new_entry with no free entry: one more of the pool
  void free_entry(uint32_t i);
  // insert's less usual steps: a reader chain due for a purge, a writer
  // into a bucket's index, a writer chain grown past kIndexWriters.
  void purge_readers(Bucket& b);
  void add_to_index(Bucket& b, const ChipTensor& t, uint32_t i);
  void index_if_long(Bucket& b);
  // Drops dead entries of one chain; returns the survivors.
  uint32_t purge(uint32_t* head);
  // Drops dead entries of an index; returns the survivors.
  uint32_t purge(WriterIndex& index);
  // Moves a bucket's writer chain into a new index.
  void build_index(Bucket& b);
  template <typename View>
  static uint64_t first_byte(const View& t) {
    return t.start_offset * t.elem_size();
  }

  std::vector<Bucket> buckets_;
  uint32_t shift_ = 64;  // buckets_.size() == 2^(64 - shift_)
  std::vector<Entry> pool_;
  size_t pool_used_ = 0;  // entries of pool_ in use this run (the rest are from earlier runs)
  uint32_t free_head_ = kNil;
  uint64_t used_ = 0;
  uint64_t entries_ = 0;
  std::vector<uint32_t> touched_;  // bucket indices used this run, for O(used) reset
  // The bucket of the last lookup: a submit probes a tensor's bucket, then
  // inserts into it (two hash lookups became one). Null after grow()/reset().
  Bucket* last_ = nullptr;
};

// ---- The submit path, inline (every submit runs it); growth, purges and the
// writer index are in tensor_map.cpp. ----

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

inline TensorMap::Bucket* TensorMap::find(uint64_t base) {
  if (last_ != nullptr && last_->base == base && last_->used) return last_;
  const uint64_t mask = buckets_.size() - 1;
  for (uint64_t i = home_of(base, shift_);; i = (i + 1) & mask) {
    Bucket& b = buckets_[i];
    if (!b.used) return nullptr;
    if (b.base == base) return last_ = &b;
  }
}

inline TensorMap::Bucket& TensorMap::find_or_add(uint64_t base) {
  if (Bucket* b = find(base)) return *b;
  return add(base);
}

inline uint32_t TensorMap::new_entry() {
  ++entries_;
  if (free_head_ != kNil) {
    const uint32_t i = free_head_;
    free_head_ = pool_[i].next;
    return i;
  }
  return new_pool_entry();
}

inline void TensorMap::free_entry(uint32_t i) {
  --entries_;
  pool_[i].next = free_head_;
  free_head_ = i;
}

inline void TensorMap::insert(const ChipTensor& t, Owner* owner, bool is_writer) {
  Bucket& b = find_or_add(t.buffer.addr);
  if (!is_writer && b.reader_count >= b.reader_purge_at) purge_readers(b);
  const uint32_t i = new_entry();
  Entry& e = pool_[i];
  e.view.assign(t);
  e.owner = owner;
  e.seq = owner->seq;
  if (is_writer && b.index) {
    add_to_index(b, t, i);
    return;
  }
  uint32_t* head = is_writer ? &b.writers : &b.readers;
  e.next = *head;
  *head = i;
  if (!is_writer) {
    ++b.reader_count;
  } else if (++b.writer_count > kIndexWriters) {
    index_if_long(b);
  }
}

}  // namespace taskring::deps
