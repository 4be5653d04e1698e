// SubmissionArena: one bulk H2D for every Graph submission image of a run.
//
// During orchestration each image is written in place into a pinned host
// arena (try_place). After the entry returns, upload() copies the used prefix
// [base, used) to a device blob with one copy_to_device; the blob is kept
// across runs and only grows. An image's device address is
// blob + (host address - pinned base). When the arena is full try_place
// returns nullptr and the caller uploads that image on its own (counted).
// The pinned buffer and the blob are released by release() (and the
// destructor), on healthy and failed paths alike.
#pragma once

#include <cstdint>

#include "taskring/device/device.hpp"

namespace taskring::graph {

class SubmissionArena {
 public:
  // `capacity` bytes of pinned memory, allocated on first use; 0 disables
  // the arena (every image falls back).
  void configure(Device* device, uint64_t capacity) {
    device_ = device;
    capacity_ = capacity;
  }
  ~SubmissionArena() { release(); }

  void begin_run() { used_ = 0; }
  // 64-byte aligned space for `bytes`, or nullptr when it does not fit (or the
  // pinned allocation failed).
  uint8_t* try_place(uint64_t bytes);
  // One copy of the used prefix (nothing when empty). Adds to `calls`/`bytes`.
  Status upload(uint64_t* calls, uint64_t* bytes);
  DeviceAddr device_address(const uint8_t* host) const { return blob_ + static_cast<uint64_t>(host - pinned_); }
  uint64_t used() const { return used_; }
  void release();

 private:
  Device* device_ = nullptr;
  uint64_t capacity_ = 0;
  uint8_t* pinned_ = nullptr;
  bool pinned_failed_ = false;
  uint64_t used_ = 0;
  DeviceAddr blob_ = 0;
  uint64_t blob_bytes_ = 0;
};

}  // namespace taskring::graph
