// Rounding a size or an offset up to an alignment: the one helper for it in
// the tree (cache lines, arena blocks, pages, window slots).
#pragma once

#include <cstdint>

namespace taskring {

// `v` rounded up to the next multiple of `a` (a > 0). A power-of-two `a` costs
// a mask, any other a division; with a constant `a` the compiler picks at
// compile time. Wrap-around for v within a - 1 of 2^64 is the caller's to rule out.
constexpr uint64_t align_up(uint64_t v, uint64_t a) {
  return (a & (a - 1)) == 0 ? (v + a - 1) & ~(a - 1) : (v + a - 1) / a * a;
}

}  // namespace taskring
