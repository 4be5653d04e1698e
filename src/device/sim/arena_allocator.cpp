#include "sim/arena_allocator.hpp"
#include "taskring/base/align.hpp"

#include <iterator>
#include <utility>

namespace taskring::sim {

namespace {
// Every block starts and ends on this granule so that neighbours never share
// a cache line (kernels on different cores write them concurrently).
constexpr uint64_t kGranule = 64;

template <typename Map>
const Block* containing(const Map& m, uint64_t off) {
  auto it = m.upper_bound(off);
  if (it == m.begin()) return nullptr;
  --it;
  const Block& b = it->second;
  return off < b.offset + b.bytes ? &b : nullptr;
}
}  // namespace

ArenaAllocator::ArenaAllocator(uint64_t arena_bytes, QuarantineLimits limits)
    : arena_bytes_(arena_bytes & ~(kGranule - 1)), limits_(limits) {
  if (arena_bytes_ > 0) free_.emplace(0, arena_bytes_);
}

std::optional<uint64_t> ArenaAllocator::first_fit(uint64_t reserve, uint64_t alignment) {
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    uint64_t start = it->first;
    uint64_t end = start + it->second;
    uint64_t at = align_up(start, alignment);
    if (at < start || at > end || end - at < reserve) continue;
    free_.erase(it);
    if (at > start) free_.emplace(start, at - start);
    if (at + reserve < end) free_.emplace(at + reserve, end - (at + reserve));
    return at;
  }
  return std::nullopt;
}

std::optional<uint64_t> ArenaAllocator::allocate(uint64_t bytes, uint64_t alignment, std::string tag) {
  if (bytes == 0 || bytes > arena_bytes_) return std::nullopt;
  if (alignment < kGranule) alignment = kGranule;
  uint64_t reserve = align_up(bytes, kGranule);
  std::optional<uint64_t> at = first_fit(reserve, alignment);
  while (!at && !quarantine_.empty()) {
    evict_oldest();
    at = first_fit(reserve, alignment);
  }
  if (!at) return std::nullopt;
  Block b{*at, bytes, reserve, next_serial_++, std::move(tag)};
  live_.emplace(*at, std::move(b));
  return at;
}

const Block* ArenaAllocator::find_live(uint64_t off) const { return containing(live_, off); }
const Block* ArenaAllocator::find_freed(uint64_t off) const { return containing(freed_, off); }

Block ArenaAllocator::release(uint64_t off) {
  auto it = live_.find(off);
  Block b = std::move(it->second);
  live_.erase(it);
  // A range freed twice cannot be in freed_ already: it was live until now.
  freed_.emplace(b.offset, b);
  quarantine_.push_back(b.offset);
  quarantine_bytes_ += b.reserved;
  while (quarantine_.size() > limits_.max_entries || quarantine_bytes_ > limits_.max_bytes) evict_oldest();
  return b;
}

void ArenaAllocator::evict_oldest() {
  uint64_t off = quarantine_.front();
  quarantine_.pop_front();
  auto it = freed_.find(off);
  quarantine_bytes_ -= it->second.reserved;
  recycled_.emplace_back(off, it->second.reserved);
  insert_free(off, it->second.reserved);
  freed_.erase(it);
}

void ArenaAllocator::insert_free(uint64_t off, uint64_t bytes) {
  auto next = free_.lower_bound(off);
  if (next != free_.end() && off + bytes == next->first) {
    bytes += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == off) {
      prev->second += bytes;
      return;
    }
  }
  free_.emplace(off, bytes);
}

std::vector<std::pair<uint64_t, uint64_t>> ArenaAllocator::take_recycled() {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  out.swap(recycled_);
  return out;
}

std::vector<Block> ArenaAllocator::live_blocks() const {
  std::vector<Block> out;
  out.reserve(live_.size());
  for (const auto& [off, b] : live_) out.push_back(b);
  return out;
}

uint64_t ArenaAllocator::free_bytes() const {
  uint64_t n = 0;
  for (const auto& [off, bytes] : free_) n += bytes;
  return n;
}

}  // namespace taskring::sim
