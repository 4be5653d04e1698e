// What the dependency component's benchmarks share: the clock they read and
// the one-row views of [rows, 64] FP32 buffers they probe with.
#pragma once

#include <cstdint>
#include <ctime>
#include <span>

#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::bench {

// Seconds of this thread's CPU time (a tracker is single-threaded: wall time
// would add whatever else the shared machine runs).
inline double thread_cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Row r of a [rows, 64] view.
inline ChipTensor row_of(const ChipTensor& t, uint32_t r) {
  const uint32_t s[2] = {1, 64}, o[2] = {r, 0};
  return *t.try_view(std::span<const uint32_t>(s, 2), std::span<const uint32_t>(o, 2));
}

}  // namespace taskring::bench
