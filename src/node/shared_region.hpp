// SharedRegion: an anonymous MAP_SHARED mapping, created before the fork.
//
// Every node region (heap, mailboxes, the parent's bell) is anonymous: it has
// no name in /dev/shm, so no crash of any process can leave one behind, and
// forked children inherit it at the same address. The price is that a region
// must exist before the fork that should see it, which the node guarantees by
// mapping everything in NodeWorker::init() before the first fork.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "taskring/base/expected.hpp"

namespace taskring::node {

class SharedRegion {
 public:
  SharedRegion() = default;
  // Maps `bytes` (> 0) of zeroed shared memory. UNAVAILABLE naming `what` and
  // errno when the kernel refuses.
  static Expected<SharedRegion> map(size_t bytes, std::string_view what);
  ~SharedRegion();
  SharedRegion(SharedRegion&& o) noexcept;
  SharedRegion& operator=(SharedRegion&& o) noexcept;
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  bool contains(uint64_t addr, uint64_t bytes) const {
    uint64_t b = reinterpret_cast<uintptr_t>(data_);
    return data_ != nullptr && addr >= b && bytes <= size_ && addr - b <= size_ - bytes;
  }

 private:
  void reset();
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace taskring::node
