#include "taskring/log/level.hpp"

#include <gtest/gtest.h>

#include "log_test_util.hpp"
#include "taskring/log/init.hpp"
#include "taskring/log/logger.hpp"

namespace taskring::log {
namespace {

TEST(LogLevel, LadderValuesAndNames) {
  EXPECT_EQ(static_cast<int>(Level::kDebug), 10);
  EXPECT_EQ(static_cast<int>(Level::kInfo), 20);
  EXPECT_EQ(static_cast<int>(Level::kTiming), 25);
  EXPECT_EQ(static_cast<int>(Level::kWarn), 30);
  EXPECT_EQ(static_cast<int>(Level::kError), 40);
  EXPECT_EQ(static_cast<int>(Level::kNul), 60);
  EXPECT_EQ(level_name(Level::kTiming), "TIMING");
  EXPECT_EQ(level_name(Level::kWarn), "WARN");
  EXPECT_EQ(level_name(static_cast<Level>(11)), "?");
}

TEST(LogLevel, ParsesNamesAnyCaseAndIntegers) {
  struct Case {
    const char* text;
    Level want;
  } cases[] = {
      {"debug", Level::kDebug}, {"DEBUG", Level::kDebug},  {"Info", Level::kInfo},   {"timing", Level::kTiming},
      {"warn", Level::kWarn},   {"WARNING", Level::kWarn}, {"error", Level::kError}, {"nul", Level::kNul},
      {"NULL", Level::kNul},    {" info ", Level::kInfo},  {"10", Level::kDebug},    {"20", Level::kInfo},
      {"25", Level::kTiming},   {"30", Level::kWarn},      {"40", Level::kError},    {"60", Level::kNul},
  };
  for (const Case& c : cases) {
    Expected<Level> got = parse_level(c.text);
    ASSERT_TRUE(got.ok()) << c.text << ": " << got.status().to_string();
    EXPECT_EQ(*got, c.want) << c.text;
  }
}

TEST(LogLevel, RejectsAnythingElseNamingVariableAndAcceptedValues) {
  for (const char* bad : {"", "verbose", "22", "50", "0", "-10", "warn2", "info,debug", "0x19", "25.0"}) {
    Expected<Level> got = parse_level(bad);
    ASSERT_FALSE(got.ok()) << bad;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
    const Status status = got.status();
    const std::string& m = status.message();
    EXPECT_NE(m.find("TASKRING_LOG_LEVEL='" + std::string(bad) + "'"), std::string::npos) << m;
    EXPECT_NE(m.find("debug, info, timing, warn|warning, error, nul|null"), std::string::npos) << m;
    EXPECT_NE(m.find("10, 20, 25, 30, 40, 60"), std::string::npos) << m;
  }
}

TEST(LogLevel, KnobDefaultsToTimingAndReadsThroughEnvLookup) {
  Expected<Level> unset = read_level_knob(map_env({}));
  ASSERT_TRUE(unset.ok());
  EXPECT_EQ(*unset, Level::kTiming);
  Expected<Level> set = read_level_knob(map_env({{"TASKRING_LOG_LEVEL", "warning"}}));
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(*set, Level::kWarn);
  EXPECT_FALSE(read_level_knob(map_env({{"TASKRING_LOG_LEVEL", "loud"}})).ok());
}

TEST(LogLevel, InitLoggingAppliesThresholdAndLeavesItOnError) {
  testing::LoggerStateGuard guard;
  set_threshold(Level::kTiming);
  ASSERT_TRUE(init_logging(map_env({{"TASKRING_LOG_LEVEL", "error"}})).ok());
  EXPECT_EQ(threshold(), Level::kError);
  Status bad = init_logging(map_env({{"TASKRING_LOG_LEVEL", "chatty"}}));
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("TASKRING_LOG_LEVEL"), std::string::npos);
  EXPECT_EQ(threshold(), Level::kError);
  Status bad_dir = init_logging(map_env({{"TASKRING_STRACE_DIR", "/nonexistent/taskring/dir"}}));
  EXPECT_FALSE(bad_dir.ok());
  EXPECT_NE(bad_dir.message().find("TASKRING_STRACE_DIR"), std::string::npos) << bad_dir.message();
  EXPECT_NE(bad_dir.message().find("/nonexistent/taskring/dir"), std::string::npos) << bad_dir.message();
  EXPECT_FALSE(init_logging(map_env({{"TASKRING_STRACE_DIR", ""}})).ok());
  ASSERT_TRUE(init_logging(map_env({})).ok());
  EXPECT_EQ(threshold(), Level::kTiming);
}

TEST(LogLevel, ThresholdGatesRecords) {
  testing::LoggerStateGuard guard;
  set_threshold(Level::kTiming);
  EXPECT_FALSE(enabled(Level::kDebug));
  EXPECT_FALSE(enabled(Level::kInfo));
  EXPECT_TRUE(enabled(Level::kTiming));
  EXPECT_TRUE(enabled(Level::kError));
  set_threshold(Level::kNul);
  EXPECT_FALSE(enabled(Level::kError));
  EXPECT_FALSE(enabled(Level::kNul));
  set_threshold(Level::kDebug);
  EXPECT_TRUE(enabled(Level::kDebug));
  EXPECT_FALSE(enabled(Level::kNul));  // NUL is never a record level
}

}  // namespace
}  // namespace taskring::log
