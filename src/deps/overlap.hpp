// Overlap of two views of one buffer, the question every dependency tracker
// (TensorMap, BuildTracker; rules.hpp states what they do with the answer)
// asks. Exact for views on one row-major lattice, conservative otherwise: a
// real overlap is never reported as kNone.
#pragma once

#include <cstdint>

#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::deps {

enum class Overlap : uint8_t { kNone, kPartial, kCovered };

// Overlap of `probe` against `entry`, both views of the same buffer.
// kCovered: probe contains every element of entry.
Overlap compute_overlap(const ChipTensor& probe, const ChipTensor& entry);

}  // namespace taskring::deps
