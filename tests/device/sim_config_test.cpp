// SimDeviceConfig::from_env: defaults, every knob, every bad value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "taskring/device/sim_device.hpp"

namespace taskring {
namespace {

using ::testing::HasSubstr;

TEST(SimConfig, Defaults) {
  auto c = SimDeviceConfig::from_env(map_env({}));
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->topology.clusters, 8);
  EXPECT_EQ(c->topology.executor_threads, default_sim_executor_threads());
  EXPECT_GE(c->topology.executor_threads, 1);
  EXPECT_EQ(c->arena_bytes, 16ull << 30);
  EXPECT_FALSE(c->link.enabled);
}

TEST(SimConfig, EveryKnobIsRead) {
  auto c = SimDeviceConfig::from_env(map_env({{"TASKRING_SIM_CLUSTERS", "24"},
                                              {"TASKRING_SIM_THREADS", "3"},
                                              {"TASKRING_SIM_LINK", "17,25"},
                                              {"TASKRING_SIM_DEVICE_MEM_MB", "512"}}));
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->topology.clusters, 24);
  EXPECT_EQ(c->topology.aiv_count(), 48);
  EXPECT_EQ(c->topology.executor_threads, 3);
  EXPECT_EQ(c->arena_bytes, 512ull << 20);
  EXPECT_TRUE(c->link.enabled);
  EXPECT_DOUBLE_EQ(c->link.latency_us, 17.0);
  EXPECT_DOUBLE_EQ(c->link.gbytes_per_s, 25.0);
}

TEST(SimConfig, RangeEdgesAreAccepted) {
  for (const char* v : {"1", "64"})
    EXPECT_TRUE(SimDeviceConfig::from_env(map_env({{"TASKRING_SIM_CLUSTERS", v}})).ok());
  for (const char* v : {"1", "256"})
    EXPECT_TRUE(SimDeviceConfig::from_env(map_env({{"TASKRING_SIM_THREADS", v}})).ok());
  EXPECT_TRUE(SimDeviceConfig::from_env(map_env({{"TASKRING_SIM_LINK", "off"}})).ok());
}

struct BadKnob {
  const char* name;
  const char* value;
  const char* range;
};

TEST(SimConfig, BadValuesNameTheVariableAndRange) {
  const BadKnob cases[] = {
      {"TASKRING_SIM_CLUSTERS", "0", "[1, 64]"},           {"TASKRING_SIM_CLUSTERS", "65", "[1, 64]"},
      {"TASKRING_SIM_CLUSTERS", "eight", "[1, 64]"},       {"TASKRING_SIM_THREADS", "0", "[1, 256]"},
      {"TASKRING_SIM_THREADS", "257", "[1, 256]"},         {"TASKRING_SIM_THREADS", "-1", "[1, 256]"},
      {"TASKRING_SIM_DEVICE_MEM_MB", "0", "[1, 1048576]"}, {"TASKRING_SIM_DEVICE_MEM_MB", "4G", "[1, 1048576]"},
      {"TASKRING_SIM_LINK", "17", "<latency_us>,<GB/s>"},  {"TASKRING_SIM_LINK", "17,0", "(0, 10000]"},
      {"TASKRING_SIM_LINK", "-1,25", "[0, 1000000]"},      {"TASKRING_SIM_LINK", "a,b", "<latency_us>,<GB/s>"},
      {"TASKRING_SIM_LINK", "", "<latency_us>,<GB/s>"},    {"TASKRING_SIM_LINK", "17,25,3", "<latency_us>,<GB/s>"},
  };
  for (const BadKnob& b : cases) {
    auto c = SimDeviceConfig::from_env(map_env({{b.name, b.value}}));
    ASSERT_FALSE(c.ok()) << b.name << "=" << b.value;
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(c.status().message(), HasSubstr(std::string(b.name) + "='" + b.value + "'"));
    EXPECT_THAT(c.status().message(), HasSubstr(b.range)) << b.name << "=" << b.value;
  }
}

TEST(SimConfig, FromEnvBuildsAWorkingDevice) {
  auto c = SimDeviceConfig::from_env(map_env({{"TASKRING_SIM_DEVICE_MEM_MB", "4"}, {"TASKRING_SIM_CLUSTERS", "2"}}));
  ASSERT_TRUE(c.ok());
  auto d = create_sim_device(*c);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_EQ((*d)->topology().core_count(), 6);
  EXPECT_FALSE((*d)->malloc(5 << 20).ok());  // the 4 MiB arena is enforced
  EXPECT_TRUE((*d)->finalize().ok());
}

}  // namespace
}  // namespace taskring
