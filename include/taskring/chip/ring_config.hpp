// Ring sizing of the tensormap_and_ringbuffer runtime, per ring level.
//
// Precedence per ring: RunConfig value (non-zero) > environment
// (PTO2_RING_TASK_WINDOW, PTO2_RING_HEAP, PTO2_RING_DEP_POOL: one value for
// all four rings or four comma-separated values) > built-in default. Invalid
// values are errors naming the variable or field and the accepted range.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "taskring/base/knobs.hpp"

namespace taskring {

inline constexpr int kRingLevels = 4;
inline constexpr uint64_t kDefaultTaskWindow = 16384;
inline constexpr uint64_t kDefaultRingHeap = 256ull << 20;
inline constexpr uint64_t kDefaultDepPool = 16384;
inline constexpr uint64_t kMinRingHeap = 1024;
inline constexpr uint64_t kHeapAlign = 1024;

struct RingSizes {
  std::array<uint64_t, kRingLevels> task_window{};  // power of two, 4..2^31
  std::array<uint64_t, kRingLevels> heap{};         // bytes, >= 1024
  std::array<uint64_t, kRingLevels> dep_pool{};     // entries, 4..2^31
};

// Resolves sizes: `overrides` entries that are non-zero win, then `env`,
// then defaults. Every value is validated.
Expected<RingSizes> resolve_ring_sizes(const RingSizes& overrides, const EnvLookup& env);

std::string describe_ring_sizes(const RingSizes& sizes);

}  // namespace taskring
