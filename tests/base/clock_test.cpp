#include "taskring/base/clock.hpp"

#include <gtest/gtest.h>

namespace taskring {
namespace {

TEST(Clock, MonotonicNeverGoesBack) {
  uint64_t prev = mono_ns();
  for (int i = 0; i < 1000; ++i) {
    uint64_t now = mono_ns();
    ASSERT_GE(now, prev);
    prev = now;
  }
  EXPECT_GT(wall_ns(), 1'600'000'000ull * 1'000'000'000ull);  // after 2020
}

TEST(Deadline, DefaultNeverExpires) {
  Deadline d;
  EXPECT_FALSE(d.expired());
  EXPECT_GT(d.remaining_ns(), 0u);
}

TEST(Deadline, PastDeadlineIsExpiredWithNothingLeft) {
  Deadline d{mono_ns() - 1};
  EXPECT_TRUE(d.expired());
  EXPECT_EQ(d.remaining_ns(), 0u);
  EXPECT_TRUE(Deadline::after_ns(0).expired());
}

TEST(Deadline, AfterSaturatesInsteadOfWrapping) {
  Deadline d = Deadline::after_ns(UINT64_MAX);
  EXPECT_EQ(d.at_mono_ns, UINT64_MAX);
  Deadline h = Deadline::after_ms(3'600'000);
  EXPECT_FALSE(h.expired());
  EXPECT_GT(h.remaining_ns(), 3'500'000'000'000ull);
}

}  // namespace
}  // namespace taskring
