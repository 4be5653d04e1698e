// Overlap of two views of one buffer, the question both dependency trackers
// (tmr's TensorMap, the build-time DepTracker of hbg and Graph recording)
// ask. Exact for views on one row-major lattice, conservative otherwise: a
// real overlap is never reported as kNone.
#pragma once

#include <cstdint>

#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::engine {

enum class Overlap : uint8_t { kNone, kPartial, kCovered };

// Overlap of `probe` against `entry`, both views of the same buffer.
// kCovered: probe contains every element of entry.
Overlap compute_overlap(const ChipTensor& probe, const ChipTensor& entry);

}  // namespace taskring::engine
