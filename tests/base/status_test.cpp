#include "taskring/base/status.hpp"
#include "taskring/base/expected.hpp"

#include <gtest/gtest.h>

#include <string>

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

// Reading the value of an error prints the Status and aborts in every build
// type (not an assert that Release compiles out).
TEST(ExpectedDeathTest, ValueOfAnErrorPrintsTheStatusAndAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Expected<int> e = out_of_range("index 7 of 3");
  EXPECT_DEATH((void)e.value(), "Expected::value\\(\\) called on an error: OUT_OF_RANGE: index 7 of 3");
  EXPECT_DEATH((void)*e, "OUT_OF_RANGE: index 7 of 3");
  Expected<std::string> s = invalid_argument("no name");
  EXPECT_DEATH((void)s->size(), "INVALID_ARGUMENT: no name");
  EXPECT_DEATH((void)std::move(s).value(), "INVALID_ARGUMENT: no name");
}

}  // namespace
}  // namespace taskring
