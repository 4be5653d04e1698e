// ArenaAllocator: offsets inside the sim device arena (not thread-safe; the
// SimDevice serialises it).
//
// First-fit over a free list kept sorted by offset, coalesced on every
// release. Allocation is not a hot path (runtimes carve their rings out of a
// few large allocations), so a linear scan is fine and keeps this readable.
//
// Freed ranges do not go back to the free list at once: they wait in a FIFO
// quarantine so that a stale address keeps naming the allocation it came from
// (use-after-free is reported, not silently served from a new allocation).
// The quarantine is drained oldest-first when it exceeds its entry or byte
// bound, and entirely when an allocation would otherwise fail, so it never
// causes an out-of-memory.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace taskring::sim {

struct Block {
  uint64_t offset = 0;    // arena offset of the first byte
  uint64_t bytes = 0;     // requested size (bounds checks use this)
  uint64_t reserved = 0;  // size taken from the free list (>= bytes)
  uint64_t serial = 0;    // 1-based allocation number
  std::string tag;
};

struct QuarantineLimits {
  size_t max_entries = 1024;
  uint64_t max_bytes = 256ull << 20;
};

class ArenaAllocator {
 public:
  ArenaAllocator(uint64_t arena_bytes, QuarantineLimits limits);

  // Reserves `bytes` at a multiple of `alignment` (a power of two). nullopt
  // when no free range fits even after draining the quarantine.
  std::optional<uint64_t> allocate(uint64_t bytes, uint64_t alignment, std::string tag);

  // The live block containing arena offset `off`, or nullptr.
  const Block* find_live(uint64_t off) const;
  // The quarantined (freed) block containing `off`, or nullptr.
  const Block* find_freed(uint64_t off) const;

  // Moves the live block starting exactly at `off` to the quarantine and
  // returns it. Precondition: find_live(off) starts at `off`.
  Block release(uint64_t off);

  // Ranges whose quarantine ended since the last call (the caller may return
  // their pages to the OS).
  std::vector<std::pair<uint64_t, uint64_t>> take_recycled();

  std::vector<Block> live_blocks() const;
  uint64_t free_bytes() const;
  uint64_t arena_bytes() const { return arena_bytes_; }
  size_t quarantined() const { return quarantine_.size(); }

 private:
  void insert_free(uint64_t off, uint64_t bytes);
  void evict_oldest();
  std::optional<uint64_t> first_fit(uint64_t reserve, uint64_t alignment);

  uint64_t arena_bytes_;
  QuarantineLimits limits_;
  uint64_t next_serial_ = 1;
  std::map<uint64_t, uint64_t> free_;  // offset -> bytes, disjoint, coalesced
  std::map<uint64_t, Block> live_;     // offset -> block
  std::map<uint64_t, Block> freed_;    // offset -> block, quarantined
  std::deque<uint64_t> quarantine_;    // offsets in freed_, oldest first
  uint64_t quarantine_bytes_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> recycled_;
};

}  // namespace taskring::sim
