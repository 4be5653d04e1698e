#include "taskring/base/knobs.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

namespace taskring {
namespace {

using ::testing::HasSubstr;

TEST(ParseIntKnob, AcceptsIntegersInRange) {
  EXPECT_EQ(*parse_int_knob("K", "7", 1, 64), 7);
  EXPECT_EQ(*parse_int_knob("K", "1", 1, 64), 1);
  EXPECT_EQ(*parse_int_knob("K", "64", 1, 64), 64);
  EXPECT_EQ(*parse_int_knob("K", "  12 ", 1, 64), 12);
  EXPECT_EQ(*parse_int_knob("K", "-5", -10, 10), -5);
  EXPECT_EQ(*parse_int_knob("K", "9223372036854775807", 0, INT64_MAX), INT64_MAX);
}

TEST(ParseIntKnob, RejectsWithNameTextAndRange) {
  for (const char* bad : {"0", "65", "", " ", "abc", "7x", "1.5", "0x10", "+3", "99999999999999999999", "--1"}) {
    auto r = parse_int_knob("TASKRING_SIM_CLUSTERS", bad, 1, 64);
    ASSERT_FALSE(r.ok()) << "accepted '" << bad << "'";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr("TASKRING_SIM_CLUSTERS='"));
    EXPECT_THAT(r.status().message(), HasSubstr(std::string(bad) + "'"));
    EXPECT_THAT(r.status().message(), HasSubstr("[1, 64]"));
  }
}

TEST(ReadIntKnob, UnsetIsNullopt) {
  auto r = read_int_knob(map_env({}), "K", 0, 10);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
}

TEST(ReadIntKnob, SetIsParsedOrRejected) {
  auto ok = read_int_knob(map_env({{"K", "3"}}), "K", 0, 10);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->value(), 3);
  auto bad = read_int_knob(map_env({{"K", "11"}}), "K", 0, 10);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("K='11'"));
  EXPECT_THAT(bad.status().message(), HasSubstr("[0, 10]"));
}

TEST(ReadBoolKnob, AcceptsEverySpellingInAnyCase) {
  for (const char* t : {"1", "true", "TRUE", "Yes", "on", " ON "}) {
    auto r = read_bool_knob(map_env({{"B", t}}), "B");
    ASSERT_TRUE(r.ok()) << t;
    EXPECT_TRUE(r->value()) << t;
  }
  for (const char* f : {"0", "false", "False", "no", "OFF"}) {
    auto r = read_bool_knob(map_env({{"B", f}}), "B");
    ASSERT_TRUE(r.ok()) << f;
    EXPECT_FALSE(r->value()) << f;
  }
  EXPECT_FALSE(read_bool_knob(map_env({}), "B")->has_value());
}

TEST(ReadBoolKnob, RejectsOtherText) {
  for (const char* bad : {"", "2", "y", "enable", "truee"}) {
    auto r = read_bool_knob(map_env({{"TASKRING_X", bad}}), "TASKRING_X");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr("TASKRING_X='"));
    EXPECT_THAT(r.status().message(), HasSubstr("expected a boolean"));
  }
}

TEST(ReadBoolKnobAny, FirstSetNameWinsAndIsReported) {
  std::vector<std::string> names{"TASKRING_SKIP_DEVICE_RUN", "SIMPLER_SKIP_DEVICE_RUN"};
  std::string used;
  auto r = read_bool_knob_any(map_env({{"SIMPLER_SKIP_DEVICE_RUN", "1"}}), names, &used);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->value());
  EXPECT_EQ(used, "SIMPLER_SKIP_DEVICE_RUN");
  used.clear();
  r = read_bool_knob_any(map_env({{"SIMPLER_SKIP_DEVICE_RUN", "1"}, {"TASKRING_SKIP_DEVICE_RUN", "0"}}), names, &used);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->value());
  EXPECT_EQ(used, "TASKRING_SKIP_DEVICE_RUN");
  used = "untouched";
  r = read_bool_knob_any(map_env({}), names, &used);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
  EXPECT_EQ(used, "untouched");
  auto bad = read_bool_knob_any(map_env({{"SIMPLER_SKIP_DEVICE_RUN", "maybe"}}), names);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("SIMPLER_SKIP_DEVICE_RUN"));
}

TEST(ReadIntListKnob, OneValueIsRepeated) {
  auto r = read_int_list_knob(map_env({{"PTO2_RING_HEAP", "4096"}}), "PTO2_RING_HEAP", 4, 1024, INT64_MAX);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->value(), (std::vector<int64_t>{4096, 4096, 4096, 4096}));
}

TEST(ReadIntListKnob, FourValuesAreKeptInOrder) {
  auto r = read_int_list_knob(map_env({{"L", "1,2, 3 ,4"}}), "L", 4, 1, 10);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->value(), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_FALSE(read_int_list_knob(map_env({}), "L", 4, 1, 10)->has_value());
}

TEST(ReadIntListKnob, WrongCountNamesVariableAndCount) {
  for (const char* bad : {"1,2", "1,2,3", "1,2,3,4,5", "1,2,3,4,"}) {
    auto r = read_int_list_knob(map_env({{"PTO2_RING_DEP_POOL", bad}}), "PTO2_RING_DEP_POOL", 4, 4, 100);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr("PTO2_RING_DEP_POOL"));
    EXPECT_THAT(r.status().message(), HasSubstr("one value or 4 comma-separated values"));
  }
}

TEST(ReadIntListKnob, BadElementNamesElementAndRange) {
  auto r = read_int_list_knob(map_env({{"PTO2_RING_TASK_WINDOW", "8,8,x,8"}}), "PTO2_RING_TASK_WINDOW", 4, 4, 1024);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("PTO2_RING_TASK_WINDOW"));
  EXPECT_THAT(r.status().message(), HasSubstr("element 'x'"));
  EXPECT_THAT(r.status().message(), HasSubstr("[4, 1024]"));
  auto out = read_int_list_knob(map_env({{"L", "2000"}}), "L", 4, 4, 1024);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("[4, 1024]"));
  EXPECT_FALSE(read_int_list_knob(map_env({{"L", ""}}), "L", 4, 4, 1024).ok());
}

TEST(ProcessEnv, ReadsTheRealEnvironment) {
  // The name is unique to this test, so setenv cannot race with other readers.
  ASSERT_EQ(::setenv("TASKRING_TEST_KNOBS_PROCESS_ENV", "42", 1), 0);
  EnvLookup env = process_env();
  EXPECT_EQ(env("TASKRING_TEST_KNOBS_PROCESS_ENV").value_or(""), "42");
  EXPECT_FALSE(env("TASKRING_TEST_KNOBS_SURELY_UNSET").has_value());
  ::unsetenv("TASKRING_TEST_KNOBS_PROCESS_ENV");
}

}  // namespace
}  // namespace taskring
