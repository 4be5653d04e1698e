#include "taskring/base/expected.hpp"
#include "taskring/base/status.hpp"

#include <gtest/gtest.h>

namespace taskring {
namespace {

TEST(Status, OkAndError) {
  EXPECT_TRUE(Status::Ok().ok());
  Status s = invalid_argument("bad thing");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.to_string(), "INVALID_ARGUMENT: bad thing");
  EXPECT_EQ(s.with_context("ctx").message(), "ctx: bad thing");
}

TEST(Expected, ValueOrStatus) {
  Expected<int> v = 3;
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 3);
  Expected<int> e = out_of_range("nope");
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kOutOfRange);
  Expected<int> bad = Status::Ok();
  EXPECT_EQ(bad.status().code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace taskring
