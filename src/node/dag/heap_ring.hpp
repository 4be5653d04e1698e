// HeapRing: FIFO bump allocation over the node's shared heap ring.
//
// Blocks are handed out in order and returned in order (the oldest first),
// like upstream's per-scope heaps: an allocation belongs to the scope open
// when it was made and is released once that scope has ended (`fence` set to
// the run's task count at that moment) and every task before the fence has
// finished. Alignment 1024. Not thread-safe: the engine holds its lock.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

namespace taskring::node {

class HeapRing {
 public:
  static constexpr uint64_t kAlign = 1024;
  static constexpr uint64_t kOpen = UINT64_MAX;

  HeapRing(uint64_t base, uint64_t bytes) : base_(base), size_(bytes) {}

  // The address of `bytes` free bytes tagged with `scope`, or nullopt when
  // the ring has no room now.
  std::optional<uint64_t> try_alloc(uint64_t bytes, uint32_t scope);
  // Sets the fence of every open block of `scope` (the scope ended).
  void close_scope(uint32_t scope, uint64_t fence);
  // Releases the oldest blocks whose fence <= retired (tasks [0, retired)
  // have all finished). Returns whether anything was released.
  bool release(uint64_t retired);
  // Drops every block (the run is over).
  void clear() { blocks_.clear(); }

  uint64_t capacity() const { return size_; }
  uint64_t in_use() const;

 private:
  struct Block {
    uint64_t begin, end;  // offsets
    uint32_t scope;
    uint64_t fence;
  };
  uint64_t base_, size_;
  std::deque<Block> blocks_;
};

}  // namespace taskring::node
