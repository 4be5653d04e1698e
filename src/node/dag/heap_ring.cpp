#include "heap_ring.hpp"

namespace taskring::node {

std::optional<uint64_t> HeapRing::try_alloc(uint64_t bytes, uint32_t scope) {
  uint64_t n = (bytes + kAlign - 1) / kAlign * kAlign;
  if (n == 0) n = kAlign;
  if (n > size_) return std::nullopt;
  uint64_t at;
  if (blocks_.empty()) {
    at = 0;
  } else {
    const uint64_t top = blocks_.back().end, bottom = blocks_.front().begin;
    if (top > bottom) {  // not wrapped: free space is [top, size) and [0, bottom)
      if (size_ - top >= n) {
        at = top;
      } else if (bottom >= n) {
        at = 0;  // wrap
      } else {
        return std::nullopt;
      }
    } else {
      // Wrapped: free space is [top, bottom).
      if (bottom - top >= n)
        at = top;
      else
        return std::nullopt;
    }
  }
  blocks_.push_back(Block{at, at + n, scope, kOpen});
  return base_ + at;
}

void HeapRing::close_scope(uint32_t scope, uint64_t fence) {
  for (Block& b : blocks_)
    if (b.scope == scope && b.fence == kOpen) b.fence = fence;
}

bool HeapRing::release(uint64_t retired) {
  bool any = false;
  while (!blocks_.empty() && blocks_.front().fence <= retired) {
    blocks_.pop_front();
    any = true;
  }
  return any;
}

uint64_t HeapRing::in_use() const {
  if (blocks_.empty()) return 0;
  const uint64_t top = blocks_.back().end, bottom = blocks_.front().begin;
  return top > bottom ? top - bottom : size_ - bottom + top;
}

}  // namespace taskring::node
