#include "taskring/base/align.hpp"

#include <gtest/gtest.h>

namespace taskring {
namespace {

static_assert(align_up(0, 64) == 0 && align_up(1, 64) == 64 && align_up(64, 64) == 64 && align_up(65, 64) == 128);
static_assert(align_up(1000, 1024) == 1024 && align_up(7, 3) == 9 && align_up(9, 3) == 9);

// Both branches (mask for powers of two, division for the rest) agree with the
// definition: the smallest multiple of `a` not below `v`.
TEST(AlignUp, SmallestMultipleNotBelow) {
  for (uint64_t a : {1u, 2u, 3u, 4096u, 6u, 64u, 1000u}) {
    for (uint64_t v = 0; v < 3 * a + 5; ++v) {
      const uint64_t r = align_up(v, a);
      EXPECT_EQ(r % a, 0u) << v << " to " << a;
      EXPECT_GE(r, v) << v << " to " << a;
      EXPECT_LT(r - v, a) << v << " to " << a;
    }
  }
}

}  // namespace
}  // namespace taskring
