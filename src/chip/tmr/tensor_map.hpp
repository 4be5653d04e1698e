// TensorMap: finds the earlier tasks a new task must wait for, from the byte
// ranges its tensors cover.
//
// Keyed by buffer base address: every view of one buffer lands in one bucket
// that keeps writers (INOUT, OUTPUT_EXISTING) and readers (INPUT) apart, so a
// reader scans only writers (RAW) while a writer scans both (WAW and WAR;
// upstream leaves WAR to the user, taskring tracks it). Overlap is exact for
// views on one row-major lattice and conservative otherwise: a real
// dependency is never dropped. A writer whose region covers an entry removes
// it (the writer now stands for it). Entries of completed tasks are dropped
// lazily. Single-threaded: only the orchestrator touches it.
//
// Many live views of one buffer: once a bucket holds more than
// kIndexWriters writer entries, its writers move from the chain into an
// index ordered by first byte (with the largest extent seen; a two-level
// sorted array, start_index.hpp), so a probe
// visits only the writers whose byte range can reach it instead of all of
// them: submit cost stops growing with the number of live disjoint writer
// views (issue 12, goal 2). Readers stay chained (a reader probe never scans
// them; a writer probe scans them for WAR).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/overlap.hpp"
#include "start_index.hpp"
#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::tmr {

struct TaskSlot;

class TensorMap {
 public:
  // `initial_buckets` is rounded up to a power of two; the table grows.
  explicit TensorMap(uint64_t initial_buckets = 4096);

  // Forgets every entry (start of a run).
  void reset();

  // Calls `fn(TaskSlot*)` for every live entry overlapping `probe`: writers
  // only, or writers and readers when `probe_is_writer`. A writer probe also
  // removes the entries it covers.
  template <typename Fn>
  void for_each_dependency(const ChipTensor& probe, bool probe_is_writer, Fn&& fn);

  void insert(const ChipTensor& t, TaskSlot* task, bool is_writer);

  uint64_t live_entries_hint() const { return entries_; }

 private:
  static constexpr uint32_t kNil = UINT32_MAX;
  // Entries live in one pool and are chained per bucket by index, so a
  // submit allocates nothing once the pool has warmed up.
  struct Entry {
    ChipTensor view;
    TaskSlot* task;
    uint64_t seq;
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
  static uint64_t first_byte(const ChipTensor& t) { return t.start_offset * t.elem_size(); }

  std::vector<Bucket> buckets_;
  std::vector<Entry> pool_;
  uint32_t free_head_ = kNil;
  uint64_t used_ = 0;
  uint64_t entries_ = 0;
  std::vector<uint32_t> touched_;  // bucket indices used this run, for O(used) reset
  // The bucket of the last lookup: a submit probes a tensor's bucket, then
  // inserts into it (two hash lookups became one). Null after grow()/reset().
  Bucket* last_ = nullptr;
};

}  // namespace taskring::tmr

#include "tensor_map_inl.hpp"
