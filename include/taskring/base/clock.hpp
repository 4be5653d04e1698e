// Clocks. Every timestamp taskring records is CLOCK_MONOTONIC nanoseconds;
// wall time appears only in the per-process clock anchor that maps one onto
// the other.
#pragma once

#include <cstdint>
#include <ctime>

namespace taskring {

// CLOCK_MONOTONIC in nanoseconds.
inline uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// CLOCK_REALTIME in nanoseconds since the Unix epoch.
inline uint64_t wall_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// A point on the monotonic clock after which a wait gives up.
struct Deadline {
  uint64_t at_mono_ns = UINT64_MAX;  // UINT64_MAX: never (use only where a caller owns the bound)

  static Deadline after_ns(uint64_t ns) {
    uint64_t now = mono_ns();
    return Deadline{ns > UINT64_MAX - now ? UINT64_MAX : now + ns};
  }
  static Deadline after_ms(uint64_t ms) { return after_ns(ms * 1000000ull); }
  bool expired() const { return mono_ns() >= at_mono_ns; }
  // Nanoseconds left, 0 once expired.
  uint64_t remaining_ns() const {
    uint64_t now = mono_ns();
    return now >= at_mono_ns ? 0 : at_mono_ns - now;
  }
};

}  // namespace taskring
