#include "buffer_table.hpp"

#include "taskring/base/align.hpp"

namespace taskring::net {

std::string BufferTable::name(uint32_t id) const {
  return "buffer " + std::to_string(id) + " on rank " + std::to_string(owner_);
}

Expected<BufferEntry> BufferTable::alloc(uint64_t bytes) {
  if (bytes == 0 || bytes > kMaxBufferBytes)
    return invalid_argument("remote_malloc: " + std::to_string(bytes) + " B not in [1, 2^32]");
  const uint64_t n = align_up(bytes, 64);
  std::lock_guard<std::mutex> lk(mu_);
  auto it = free_.begin();
  while (it != free_.end() && it->second < n) ++it;
  if (it == free_.end())
    return resource_exhausted("remote_malloc: " + std::to_string(bytes) + " B do not fit in rank " +
                              std::to_string(owner_) +
                              "'s buffer pool (NetConfig::pool_bytes=" + std::to_string(capacity_) + ")");
  uint32_t id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    if (slots_.size() >= kMaxBuffersPerRank)
      return resource_exhausted("remote_malloc: rank " + std::to_string(owner_) + " already holds " +
                                std::to_string(kMaxBuffersPerRank) + " buffers");
    id = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  const uint64_t off = it->first, left = it->second - n;
  free_.erase(it);
  if (left > 0) free_[off + n] = left;
  Slot& s = slots_[id];
  s.live = true;
  s.offset = off;
  s.bytes = bytes;
  return BufferEntry{id, s.generation, off, bytes};
}

Status BufferTable::free(uint32_t id, uint32_t generation) {
  std::lock_guard<std::mutex> lk(mu_);
  auto e = lookup_locked(id, generation);
  if (!e.ok()) return e.status().with_context("remote_free");
  Slot& s = slots_[id];
  s.live = false;
  s.generation = (s.generation + 1) & 0xff;
  free_ids_.push_back(id);
  if (capacity_ > 0) {  // owner: return the range, merge neighbours
    uint64_t off = s.offset, n = align_up(s.bytes, 64);
    auto next = free_.lower_bound(off);
    if (next != free_.end() && next->first == off + n) {
      n += next->second;
      next = free_.erase(next);
    }
    if (next != free_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == off) {
        off = prev->first;
        n += prev->second;
        free_.erase(prev);
      }
    }
    free_[off] = n;
  }
  return Status::Ok();
}

void BufferTable::record(const BufferEntry& e) {
  std::lock_guard<std::mutex> lk(mu_);
  if (slots_.size() <= e.id) slots_.resize(e.id + 1);
  Slot& s = slots_[e.id];
  s.live = true;
  s.generation = e.generation;
  s.offset = e.offset;
  s.bytes = e.bytes;
}

Expected<BufferEntry> BufferTable::lookup_locked(uint32_t id, uint32_t generation) const {
  if (id >= slots_.size()) return not_found(name(id) + " was never allocated");
  const Slot& s = slots_[id];
  if (!s.live) return failed_precondition(name(id) + " is freed");
  if (s.generation != (generation & 0xff))
    return failed_precondition(name(id) + " is at generation " + std::to_string(s.generation) +
                               ", the descriptor names generation " + std::to_string(generation) +
                               " (a stale descriptor of a freed buffer)");
  return BufferEntry{id, s.generation, s.offset, s.bytes};
}

Expected<BufferEntry> BufferTable::lookup(uint32_t id, uint32_t generation) const {
  std::lock_guard<std::mutex> lk(mu_);
  return lookup_locked(id, generation);
}

Expected<BufferEntry> BufferTable::check(const RemoteTensor& d) const {
  auto e = lookup(d.buffer_id, d.generation);
  if (!e.ok()) return e;
  if (d.offset > e->bytes || d.nbytes > e->bytes - d.offset)
    return out_of_range(name(d.buffer_id) + ": byte range [" + std::to_string(d.offset) + ", " +
                        std::to_string(d.offset + d.nbytes) + ") leaves its " + std::to_string(e->bytes) + " B");
  return e;
}

}  // namespace taskring::net
