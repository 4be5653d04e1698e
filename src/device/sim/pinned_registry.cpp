#include "sim/pinned_registry.hpp"
#include "taskring/base/align.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace taskring::sim {

namespace {
uint64_t page_size() {
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? static_cast<uint64_t>(p) : 4096;
}
std::string hex(uintptr_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}
}  // namespace

Expected<void*> PinnedRegistry::allocate(uint64_t bytes) {
  if (bytes == 0) return invalid_argument("alloc_pinned: size 0");
  uint64_t page = page_size();
  if (bytes > (uint64_t{1} << 46))
    return resource_exhausted("alloc_pinned: " + std::to_string(bytes) + " bytes is too large");
  uint64_t rounded = align_up(bytes, page);
  void* p = std::aligned_alloc(page, rounded);
  if (p == nullptr) return resource_exhausted("alloc_pinned: could not allocate " + std::to_string(bytes) + " bytes");
  std::lock_guard<std::mutex> lock(mu_);
  live_.emplace(reinterpret_cast<uintptr_t>(p), bytes);
  live_bytes_ += bytes;
  return p;
}

Status PinnedRegistry::release(void* ptr) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == live_.end()) {
    return invalid_argument("free_pinned: " + hex(reinterpret_cast<uintptr_t>(ptr)) +
                            " is not a live pinned buffer of this device (never allocated, or freed already)");
  }
  live_bytes_ -= it->second;
  std::free(ptr);
  live_.erase(it);
  return Status::Ok();
}

uint64_t PinnedRegistry::live_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_bytes_;
}

std::pair<uint64_t, uint64_t> PinnedRegistry::release_all() {
  std::lock_guard<std::mutex> lock(mu_);
  std::pair<uint64_t, uint64_t> was{live_.size(), live_bytes_};
  for (const auto& [addr, bytes] : live_) std::free(reinterpret_cast<void*>(addr));
  live_.clear();
  live_bytes_ = 0;
  return was;
}

}  // namespace taskring::sim
