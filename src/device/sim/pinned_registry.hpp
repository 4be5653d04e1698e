// PinnedRegistry: the page-aligned host buffers a device handed out.
//
// On sim "pinned" means page-aligned and tracked: a free of a pointer the
// registry did not hand out (or already took back) is an error rather than
// heap corruption, and buffers still live at finalize are reported.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

#include "taskring/base/expected.hpp"

namespace taskring::sim {

class PinnedRegistry {
 public:
  PinnedRegistry() = default;
  PinnedRegistry(const PinnedRegistry&) = delete;
  PinnedRegistry& operator=(const PinnedRegistry&) = delete;
  ~PinnedRegistry() { release_all(); }

  // `bytes` > 0; the buffer is rounded up to whole pages.
  Expected<void*> allocate(uint64_t bytes);
  Status release(void* ptr);
  uint64_t live_bytes() const;
  // Frees every live buffer; returns (count, bytes) of what was live.
  std::pair<uint64_t, uint64_t> release_all();

 private:
  mutable std::mutex mu_;
  std::map<uintptr_t, uint64_t> live_;  // address -> requested bytes
  uint64_t live_bytes_ = 0;
};

}  // namespace taskring::sim
