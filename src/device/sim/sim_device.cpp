// The sim device: arena, allocator, bounds-checked copies, counters.
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>

#include "sim/arena_allocator.hpp"
#include "sim/pinned_registry.hpp"
#include "taskring/base/clock.hpp"
#include "taskring/base/waiter.hpp"
#include "taskring/device/sim_device.hpp"

namespace taskring {
namespace {

constexpr uint64_t kMaxAlignment = 4096;
constexpr uint64_t kMinArenaBytes = 1ull << 20;
// Recycled ranges at least this large give their pages back to the OS, so a
// long run that churns big buffers does not keep its peak resident forever.
constexpr uint64_t kMadviseThreshold = 64ull << 10;
// Leak reports list this many allocations, then a count.
constexpr size_t kMaxLeaksListed = 16;

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string name_block(const sim::Block& b) {
  std::string s = "allocation #" + std::to_string(b.serial);
  s += b.tag.empty() ? std::string(" (untagged)") : " ('" + b.tag + "')";
  s += " at " + hex(kSimDeviceAddressBase + b.offset);
  return s;
}

// Holds the caller for the modelled transfer time. Long waits sleep most of
// it so that a slow link model never keeps a core busy; the tail is spun for
// accuracy.
void charge_link(uint64_t ns) {
  if (ns == 0) return;
  uint64_t end = mono_ns() + ns;
  constexpr uint64_t kSpinTailNs = 60'000;
  if (ns > 2 * kSpinTailNs) std::this_thread::sleep_for(std::chrono::nanoseconds(ns - kSpinTailNs));
  while (mono_ns() < end) Waiter::cpu_relax();
}

class SimDevice final : public Device {
 public:
  SimDevice(const SimDeviceConfig& config, char* host_base)
      : config_(config),
        host_base_(host_base),
        alloc_(config.arena_bytes,
               sim::QuarantineLimits{1024, std::min<uint64_t>(256ull << 20, config.arena_bytes / 4)}) {}
  ~SimDevice() override { (void)finalize(); }

  std::string_view name() const override { return "sim"; }
  Topology topology() const override { return config_.topology; }

  Expected<DeviceAddr> malloc(uint64_t bytes, uint64_t alignment, std::string_view tag) override {
    std::string what = "malloc(" + std::to_string(bytes) + (tag.empty() ? "" : ", '" + std::string(tag) + "'") + ")";
    if (bytes == 0) return invalid_argument(what + ": size must be > 0");
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > kMaxAlignment) {
      return invalid_argument(what + ": alignment " + std::to_string(alignment) +
                              " must be a power of two in [1, 4096]");
    }
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (finalized_) return failed_precondition(what + ": device was finalized");
    std::optional<uint64_t> off = alloc_.allocate(bytes, alignment, std::string(tag));
    recycle_pages();
    if (!off) {
      return resource_exhausted(what + ": sim device arena exhausted (" + std::to_string(alloc_.free_bytes()) + " of " +
                                std::to_string(alloc_.arena_bytes()) + " bytes free; set " + kSimDeviceMemKnob +
                                " for a larger arena)");
    }
    ++alloc_calls_;
    ++live_allocations_;
    live_bytes_ += bytes;
    peak_bytes_ = std::max(peak_bytes_, live_bytes_);
    return kSimDeviceAddressBase + *off;
  }

  Status free(DeviceAddr addr) override {
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (finalized_) return failed_precondition("free(" + hex(addr) + "): device was finalized");
    if (!in_arena(addr)) return invalid_argument("free: " + hex(addr) + " is not a sim device address");
    uint64_t off = addr - kSimDeviceAddressBase;
    if (const sim::Block* b = alloc_.find_live(off)) {
      if (b->offset != off) {
        return invalid_argument("free: " + hex(addr) + " points " + std::to_string(off - b->offset) + " bytes inside " +
                                name_block(*b) + "; free takes the address malloc returned");
      }
      sim::Block gone = alloc_.release(off);
      recycle_pages();
      ++free_calls_;
      --live_allocations_;
      live_bytes_ -= gone.bytes;
      return Status::Ok();
    }
    if (const sim::Block* b = alloc_.find_freed(off)) {
      if (b->offset == off) return failed_precondition("free: double free of " + name_block(*b));
      return failed_precondition("free: " + hex(addr) + " points inside " + name_block(*b) + ", already freed");
    }
    return invalid_argument("free: " + hex(addr) + " is not an allocation of this device");
  }

  Status copy_to_device(DeviceAddr dst, const void* src, uint64_t bytes) override {
    if (src == nullptr && bytes > 0) {
      return invalid_argument("copy_to_device: null host source for " + std::to_string(bytes) + " bytes");
    }
    {
      std::shared_lock<std::shared_mutex> lock(mu_);
      TASKRING_ASSIGN_OR_RETURN(char* p, resolve("copy_to_device", dst, bytes));
      if (bytes > 0) std::memcpy(p, src, bytes);
    }
    h2d_calls_.fetch_add(1, std::memory_order_relaxed);
    h2d_bytes_.fetch_add(bytes, std::memory_order_relaxed);
    charge(bytes);
    return Status::Ok();
  }

  Status copy_from_device(void* dst, DeviceAddr src, uint64_t bytes) override {
    if (dst == nullptr && bytes > 0) {
      return invalid_argument("copy_from_device: null host destination for " + std::to_string(bytes) + " bytes");
    }
    {
      std::shared_lock<std::shared_mutex> lock(mu_);
      TASKRING_ASSIGN_OR_RETURN(char* p, resolve("copy_from_device", src, bytes));
      if (bytes > 0) std::memcpy(dst, p, bytes);
    }
    d2h_calls_.fetch_add(1, std::memory_order_relaxed);
    d2h_bytes_.fetch_add(bytes, std::memory_order_relaxed);
    charge(bytes);
    return Status::Ok();
  }

  Status memset(DeviceAddr dst, int value, uint64_t bytes) override {
    std::shared_lock<std::shared_mutex> lock(mu_);
    TASKRING_ASSIGN_OR_RETURN(char* p, resolve("memset", dst, bytes));
    if (bytes > 0) std::memset(p, value, bytes);
    memset_calls_.fetch_add(1, std::memory_order_relaxed);
    return Status::Ok();
  }

  Expected<void*> alloc_pinned(uint64_t bytes) override {
    if (is_finalized()) return failed_precondition("alloc_pinned: device was finalized");
    return pinned_.allocate(bytes);
  }
  Status free_pinned(void* ptr) override { return pinned_.release(ptr); }

  Expected<void*> device_view(DeviceAddr addr, uint64_t bytes) override {
    std::shared_lock<std::shared_mutex> lock(mu_);
    TASKRING_ASSIGN_OR_RETURN(char* p, resolve("device_view", addr, bytes == 0 ? 1 : bytes));
    return static_cast<void*>(p);
  }

  void* device_view_unchecked(DeviceAddr addr) const override {
    char* base = host_base_.load(std::memory_order_acquire);
    if (base == nullptr || !in_arena(addr)) return nullptr;
    return base + (addr - kSimDeviceAddressBase);
  }

  bool is_device_address(uint64_t addr) const override { return in_arena(addr); }

  LinearWindow linear_window() const override {
    char* base = host_base_.load(std::memory_order_acquire);
    if (base == nullptr) return {};
    return LinearWindow{kSimDeviceAddressBase, config_.arena_bytes, base};
  }

  DeviceCounters counters() const override {
    DeviceCounters c;
    c.h2d_calls = h2d_calls_.load(std::memory_order_relaxed);
    c.h2d_bytes = h2d_bytes_.load(std::memory_order_relaxed);
    c.d2h_calls = d2h_calls_.load(std::memory_order_relaxed);
    c.d2h_bytes = d2h_bytes_.load(std::memory_order_relaxed);
    c.memset_calls = memset_calls_.load(std::memory_order_relaxed);
    c.link_charged_ns = link_charged_ns_.load(std::memory_order_relaxed);
    c.pinned_live_bytes = pinned_.live_bytes();
    std::shared_lock<std::shared_mutex> lock(mu_);
    c.alloc_calls = alloc_calls_;
    c.free_calls = free_calls_;
    c.live_bytes = live_bytes_;
    c.peak_bytes = peak_bytes_;
    c.live_allocations = live_allocations_;
    return c;
  }

  void reset_transfer_counters() override {
    h2d_calls_ = 0;
    h2d_bytes_ = 0;
    d2h_calls_ = 0;
    d2h_bytes_ = 0;
    memset_calls_ = 0;
    link_charged_ns_ = 0;
  }

  std::vector<LeakRecord> live_allocations() const override {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return leak_records();
  }

  Status finalize() override {
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (finalized_) return finalize_status_;
    std::vector<LeakRecord> leaks = leak_records();
    auto [pinned_count, pinned_bytes] = pinned_.release_all();
    char* base = host_base_.exchange(nullptr, std::memory_order_acq_rel);
    if (base != nullptr) munmap(base, config_.arena_bytes);
    finalized_ = true;
    if (leaks.empty() && pinned_count == 0) return finalize_status_ = Status::Ok();
    std::string m = "finalize: ";
    if (!leaks.empty()) {
      uint64_t bytes = 0;
      for (const LeakRecord& l : leaks) bytes += l.bytes;
      m += std::to_string(leaks.size()) + " device allocation(s) leaked (" + std::to_string(bytes) + " bytes):";
      for (size_t i = 0; i < leaks.size() && i < kMaxLeaksListed; ++i) {
        const LeakRecord& l = leaks[i];
        m += " #" + std::to_string(l.serial) + (l.tag.empty() ? "" : " '" + l.tag + "'") + " " +
             std::to_string(l.bytes) + " B at " + hex(l.addr) + ";";
      }
      if (leaks.size() > kMaxLeaksListed) m += " and " + std::to_string(leaks.size() - kMaxLeaksListed) + " more;";
    }
    if (pinned_count > 0) {
      m += " " + std::to_string(pinned_count) + " pinned host buffer(s) leaked (" + std::to_string(pinned_bytes) +
           " bytes);";
    }
    m.pop_back();
    return finalize_status_ = failed_precondition(m);
  }

 private:
  bool in_arena(uint64_t addr) const {
    return addr >= kSimDeviceAddressBase && addr - kSimDeviceAddressBase < config_.arena_bytes;
  }
  bool is_finalized() const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return finalized_;
  }

  // Host pointer for [addr, addr+bytes) inside one live allocation. Caller
  // holds mu_ (shared or exclusive).
  Expected<char*> resolve(const char* op, DeviceAddr addr, uint64_t bytes) const {
    if (finalized_) return failed_precondition(std::string(op) + ": device was finalized");
    if (!in_arena(addr)) {
      return invalid_argument(std::string(op) + ": " + hex(addr) + " is not a sim device address (arena " +
                              hex(kSimDeviceAddressBase) + ".." + hex(kSimDeviceAddressBase + config_.arena_bytes) +
                              ")");
    }
    uint64_t off = addr - kSimDeviceAddressBase;
    if (const sim::Block* b = alloc_.find_live(off)) {
      uint64_t rel = off - b->offset;
      if (bytes > b->bytes - rel) {
        return out_of_range(std::string(op) + ": " + std::to_string(bytes) + " bytes at " + hex(addr) + " leave " +
                            name_block(*b) + " of " + std::to_string(b->bytes) + " bytes (requested bytes [" +
                            std::to_string(rel) + ", " + std::to_string(rel + bytes) + ") of it)");
      }
      return host_base_.load(std::memory_order_relaxed) + off;
    }
    if (const sim::Block* b = alloc_.find_freed(off)) {
      return failed_precondition(std::string(op) + ": use after free of " + name_block(*b) + " (" +
                                 std::to_string(b->bytes) + " bytes; address " + hex(addr) + ")");
    }
    return invalid_argument(std::string(op) + ": " + hex(addr) + " is not inside a live allocation");
  }

  std::vector<LeakRecord> leak_records() const {
    std::vector<LeakRecord> out;
    for (const sim::Block& b : alloc_.live_blocks()) {
      out.push_back(LeakRecord{kSimDeviceAddressBase + b.offset, b.bytes, b.serial, b.tag});
    }
    std::sort(out.begin(), out.end(), [](const LeakRecord& a, const LeakRecord& b) { return a.serial < b.serial; });
    return out;
  }

  // Returns pages of ranges that left the quarantine to the OS. Runs under
  // the exclusive lock, before any of them can be handed out again.
  void recycle_pages() {
    char* base = host_base_.load(std::memory_order_relaxed);
    for (auto [off, bytes] : alloc_.take_recycled()) {
      if (bytes < kMadviseThreshold || base == nullptr) continue;
      uint64_t first = (off + 4095) & ~4095ull;
      uint64_t last = (off + bytes) & ~4095ull;
      if (last > first) madvise(base + first, last - first, MADV_DONTNEED);
    }
  }

  void charge(uint64_t bytes) {
    uint64_t ns = config_.link.cost_ns(bytes);
    if (ns == 0) return;
    charge_link(ns);
    link_charged_ns_.fetch_add(ns, std::memory_order_relaxed);
  }

  const SimDeviceConfig config_;
  // Host mapping of the arena; nullptr once finalized. Atomic so that
  // device_view_unchecked stays lock-free.
  std::atomic<char*> host_base_;

  // mu_ guards the allocator, the allocation counters and finalized_. Copies
  // hold it shared for the memcpy so that a concurrent free waits for them.
  mutable std::shared_mutex mu_;
  sim::ArenaAllocator alloc_;
  bool finalized_ = false;
  Status finalize_status_;
  uint64_t alloc_calls_ = 0;
  uint64_t free_calls_ = 0;
  uint64_t live_bytes_ = 0;
  uint64_t peak_bytes_ = 0;
  uint64_t live_allocations_ = 0;

  std::atomic<uint64_t> h2d_calls_{0}, h2d_bytes_{0}, d2h_calls_{0}, d2h_bytes_{0};
  std::atomic<uint64_t> memset_calls_{0}, link_charged_ns_{0};
  sim::PinnedRegistry pinned_;
};

}  // namespace

Expected<std::unique_ptr<Device>> create_sim_device(const SimDeviceConfig& config) {
  const Topology& t = config.topology;
  if (t.clusters < 1 || t.clusters > kSimMaxClusters) {
    return invalid_argument("create_sim_device: clusters " + std::to_string(t.clusters) + " outside [1, " +
                            std::to_string(kSimMaxClusters) + "]");
  }
  if (t.executor_threads < 1 || t.executor_threads > kSimMaxThreads) {
    return invalid_argument("create_sim_device: executor threads " + std::to_string(t.executor_threads) +
                            " outside [1, " + std::to_string(kSimMaxThreads) + "]");
  }
  uint64_t max_arena = static_cast<uint64_t>(kSimMaxDeviceMemMB) << 20;
  if (config.arena_bytes < kMinArenaBytes || config.arena_bytes > max_arena) {
    return invalid_argument("create_sim_device: arena " + std::to_string(config.arena_bytes) +
                            " bytes outside [1 MiB, 1 TiB]");
  }
  void* p =
      mmap(nullptr, config.arena_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    return unavailable("create_sim_device: could not reserve a " + std::to_string(config.arena_bytes >> 20) +
                       " MiB arena: " + std::strerror(err) + " (lower " + kSimDeviceMemKnob + ")");
  }
  return std::unique_ptr<Device>(new SimDevice(config, static_cast<char*>(p)));
}

}  // namespace taskring
