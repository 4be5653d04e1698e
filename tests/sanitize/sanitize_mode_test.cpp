// TASKRING_SANITIZE parsing: every accepted spelling, and errors that name
// the variable, the text and what is accepted.
#include <gtest/gtest.h>

#include "taskring/chip/sanitize_mode.hpp"

namespace taskring::sanitize {
namespace {

TEST(SanitizeMode, AcceptedSpellings) {
  auto off = parse_sanitize_mode("V", "off");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->any());
  auto tags = parse_sanitize_mode("V", "tags");
  ASSERT_TRUE(tags.ok());
  EXPECT_TRUE(tags->tags);
  EXPECT_EQ(tags->schedule_runs, 0);
  auto sched = parse_sanitize_mode("V", "schedule");
  ASSERT_TRUE(sched.ok());
  EXPECT_FALSE(sched->tags);
  EXPECT_EQ(sched->schedule_runs, kDefaultScheduleRuns);
  auto both = parse_sanitize_mode("V", "tags,schedule:3");
  ASSERT_TRUE(both.ok());
  EXPECT_TRUE(both->tags);
  EXPECT_EQ(both->schedule_runs, 3);
  auto env = read_sanitize_mode(map_env({{"TASKRING_SANITIZE", "schedule:5,tags"}}));
  ASSERT_TRUE(env.ok());
  EXPECT_TRUE(env->tags);
  EXPECT_EQ(env->schedule_runs, 5);
  auto unset = read_sanitize_mode(map_env({}));
  ASSERT_TRUE(unset.ok());
  EXPECT_FALSE(unset->any());
  EXPECT_EQ(unset->seed, 1u);
  EXPECT_EQ(unset->describe(), "off");
  EXPECT_EQ(tags->describe(), "tags");
  EXPECT_EQ(sched->describe(), "schedule:8");
  EXPECT_EQ(both->describe(), "tags,schedule:3");
  auto seeded = read_sanitize_mode(map_env({{"TASKRING_SANITIZE", "schedule"}, {"TASKRING_SANITIZE_SEED", "42"}}));
  ASSERT_TRUE(seeded.ok());
  EXPECT_EQ(seeded->seed, 42u);
  auto bad_seed = read_sanitize_mode(map_env({{"TASKRING_SANITIZE_SEED", "0"}}));
  ASSERT_FALSE(bad_seed.ok());
  EXPECT_NE(bad_seed.status().message().find("TASKRING_SANITIZE_SEED"), std::string::npos);
}

TEST(SanitizeMode, BadValuesNameTheVariable) {
  for (const char* bad : {"tag", "schedule:1", "schedule:x", "tags,", "tags,tags", "schedule5", "schedule:1001"}) {
    auto m = read_sanitize_mode(map_env({{"TASKRING_SANITIZE", bad}}));
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_NE(m.status().message().find("TASKRING_SANITIZE='" + std::string(bad) + "'"), std::string::npos)
        << m.status().message();
    EXPECT_NE(m.status().message().find("expected `off`, `tags`"), std::string::npos) << m.status().message();
  }
}

}  // namespace
}  // namespace taskring::sanitize
