// BufferTable: the remote buffers of one rank.
//
// On the owner it is also the allocator of the rank's buffer pool (a
// first-fit free list over [0, capacity), 64-byte aligned, neighbours
// merged on free). On rank 0 one table per rank mirrors what the owners
// granted (record/forget), so submits are checked without a round trip.
// Ids are reused after free with the generation bumped (mod 256): a stale
// descriptor is rejected by its generation. Thread-safe (one mutex): the
// owner's progress thread and its task executor both look buffers up.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "taskring/base/expected.hpp"
#include "taskring/net/net_worker.hpp"

namespace taskring::net {

struct BufferEntry {
  uint32_t id = 0;
  uint32_t generation = 0;
  uint64_t offset = 0;  // in the pool (owner only)
  uint64_t bytes = 0;
};

class BufferTable {
 public:
  BufferTable(int owner, uint64_t capacity) : owner_(owner), capacity_(capacity) {
    if (capacity > 0) free_[0] = capacity;
  }

  // Owner: a new buffer of `bytes` (> 0).
  Expected<BufferEntry> alloc(uint64_t bytes);
  // Owner and mirror: frees `id` of `generation`.
  Status free(uint32_t id, uint32_t generation);
  // Mirror: records what the owner granted.
  void record(const BufferEntry& e);
  // The live entry for (id, generation), or an error naming what is wrong.
  Expected<BufferEntry> lookup(uint32_t id, uint32_t generation) const;
  // lookup() plus the byte range of `d`.
  Expected<BufferEntry> check(const RemoteTensor& d) const;

 private:
  struct Slot {
    bool live = false;
    uint32_t generation = 0;
    uint64_t offset = 0, bytes = 0;
  };
  Expected<BufferEntry> lookup_locked(uint32_t id, uint32_t generation) const;
  std::string name(uint32_t id) const;

  int owner_;
  uint64_t capacity_;
  mutable std::mutex mu_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_ids_;
  std::map<uint64_t, uint64_t> free_;  // offset -> bytes
};

}  // namespace taskring::net
