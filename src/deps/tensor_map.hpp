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
  void grow();
  static bool live(const Entry& e);
  uint32_t new_entry();
  void free_entry(uint32_t i);
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

}  // namespace taskring::deps

#include "deps/tensor_map_inl.hpp"
