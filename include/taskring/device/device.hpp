// Device: device memory, host<->device copies, pinned host buffers, counters.
//
// Device memory is not host memory (docs/architecture.md, "Decisions"). Host code reaches device
// bytes only through copy_to_device / copy_from_device / memset; kernels and
// the device-side runtime reach them through `device_view()`, which stands
// for "code running on the device". Every copy is counted so that H2D/D2H can
// be reported and benchmarked.
//
// Thread safety: all methods may be called concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "taskring/base/expected.hpp"

namespace taskring {

using DeviceAddr = uint64_t;

struct DeviceCounters {
  uint64_t h2d_calls = 0;
  uint64_t h2d_bytes = 0;
  uint64_t d2h_calls = 0;
  uint64_t d2h_bytes = 0;
  uint64_t memset_calls = 0;
  uint64_t alloc_calls = 0;
  uint64_t free_calls = 0;
  uint64_t live_bytes = 0;
  uint64_t peak_bytes = 0;
  uint64_t live_allocations = 0;
  uint64_t pinned_live_bytes = 0;
  uint64_t link_charged_ns = 0;  // time charged by the transfer cost model (0 when off)
};

// One allocation still live at finalize.
struct LeakRecord {
  DeviceAddr addr = 0;
  uint64_t bytes = 0;
  uint64_t serial = 0;  // allocation number, 1-based, in allocation order
  std::string tag;      // what the caller said it was for (may be empty)
};

// Cost charged per copy call: latency + bytes / bandwidth. Off by default.
struct LinkModel {
  bool enabled = false;
  double latency_us = 0.0;
  double gbytes_per_s = 0.0;
  // Nanoseconds one copy of `bytes` costs; 0 when disabled.
  uint64_t cost_ns(uint64_t bytes) const;
  // "off" or "17 us + 25 GB/s".
  std::string describe() const;

  // Parses "<latency_us>,<GB/s>" (latency in [0, 1e6], bandwidth in (0, 1e4])
  // or "off" / "0" (disabled). Errors name `knob`, the text and the ranges.
  static Expected<LinkModel> parse(std::string_view knob, std::string_view text);
};

// Cores of one chip: clusters of 1 AIC + 2 AIV.
struct Topology {
  int clusters = 8;
  int executor_threads = 2;  // host threads that run kernels
  int aic_count() const { return clusters; }
  int aiv_count() const { return 2 * clusters; }
  int core_count() const { return 3 * clusters; }
};

// A device address range that maps linearly onto host memory (sim: its
// arena), so that hot paths check and translate an address without a
// virtual call. Empty (bytes == 0) for a device without one; callers then use
// is_device_address / device_view_unchecked.
struct LinearWindow {
  DeviceAddr base = 0;
  uint64_t bytes = 0;
  char* host = nullptr;  // host address of `base`
  bool contains(DeviceAddr addr) const { return addr - base < bytes; }
  // Precondition: contains(addr).
  void* view(DeviceAddr addr) const { return host + (addr - base); }
};

class Device {
 public:
  virtual ~Device() = default;

  // "sim", ...
  virtual std::string_view name() const = 0;
  virtual Topology topology() const = 0;

  // Allocates `bytes` (> 0) of device memory aligned to `alignment` (a power
  // of two, at most 4096). `tag` appears in leak reports and errors.
  virtual Expected<DeviceAddr> malloc(uint64_t bytes, uint64_t alignment = 64, std::string_view tag = {}) = 0;
  // Frees an address returned by malloc. Freeing anything else, or twice, is
  // an error naming the address.
  virtual Status free(DeviceAddr addr) = 0;

  // Copies must lie inside one live allocation; the error names it.
  virtual Status copy_to_device(DeviceAddr dst, const void* src, uint64_t bytes) = 0;
  virtual Status copy_from_device(void* dst, DeviceAddr src, uint64_t bytes) = 0;
  virtual Status memset(DeviceAddr dst, int value, uint64_t bytes) = 0;

  // Page-aligned host memory suitable for bulk transfers.
  virtual Expected<void*> alloc_pinned(uint64_t bytes) = 0;
  virtual Status free_pinned(void* ptr) = 0;

  // The device-side view of [addr, addr+bytes): a pointer that code running
  // *on the device* (kernels, the control-processor runtime) dereferences.
  // Host code must not use it. Fails when the range is not inside one live
  // allocation.
  virtual Expected<void*> device_view(DeviceAddr addr, uint64_t bytes) = 0;
  // Same without the allocation lookup: base-relative translation for hot
  // paths that already validated the range. Returns nullptr when `addr` is
  // outside the device address range.
  virtual void* device_view_unchecked(DeviceAddr addr) const = 0;
  // True when `addr` is in this device's address range (live or not).
  virtual bool is_device_address(uint64_t addr) const = 0;
  // The linear window over the whole address range, if the device has one.
  // Valid until finalize(): a runtime takes it at the start of each run.
  virtual LinearWindow linear_window() const { return {}; }

  virtual DeviceCounters counters() const = 0;
  virtual void reset_transfer_counters() = 0;
  virtual std::vector<LeakRecord> live_allocations() const = 0;

  // Releases everything. Returns OK when nothing leaked; otherwise
  // FAILED_PRECONDITION whose message lists the leaked allocations (the
  // memory is released either way). Idempotent.
  virtual Status finalize() = 0;
};

}  // namespace taskring
