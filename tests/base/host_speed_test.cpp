// probe_cpu_speed: one timing per CPU of the mask, the mask restored, bad
// input refused; largest_speed_change over the CPUs both probes hold.
#include "taskring/base/host_speed.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <cstring>

namespace taskring {
namespace {

cpu_set_t current_mask() {
  cpu_set_t m;
  CPU_ZERO(&m);
  EXPECT_EQ(sched_getaffinity(0, sizeof(m), &m), 0);
  return m;
}

TEST(HostSpeed, TimesEachCpuOfTheMaskAndRestoresIt) {
  const cpu_set_t before = current_mask();
  auto p = probe_cpu_speed(16, Deadline::after_ms(5000));
  ASSERT_TRUE(p.ok()) << p.status().message();
  const int in_mask = CPU_COUNT(&before);
  EXPECT_EQ(static_cast<int>(p->size()), in_mask < 16 ? in_mask : 16);
  int last = -1;
  for (const CpuSpeed& s : *p) {
    EXPECT_TRUE(CPU_ISSET(s.cpu, &before)) << "cpu " << s.cpu << " is not in the mask";
    EXPECT_GT(s.cpu, last) << "CPUs in mask order, each once";
    last = s.cpu;
    EXPECT_GT(s.chunk_us, 0.0);
    EXPECT_LT(s.chunk_us, 1e6);
  }
  const cpu_set_t after = current_mask();
  EXPECT_TRUE(CPU_EQUAL(&before, &after)) << "the affinity mask was not restored";
}

TEST(HostSpeed, MaxCpusBoundsTheProbeAndAnExpiredDeadlineStillTimesOneChunk) {
  auto one = probe_cpu_speed(1, Deadline::after_ms(0));
  ASSERT_TRUE(one.ok()) << one.status().message();
  ASSERT_EQ(one->size(), 1u);
  EXPECT_GT((*one)[0].chunk_us, 0.0);
}

TEST(HostSpeed, NoCpusIsAnError) {
  auto p = probe_cpu_speed(0, Deadline::after_ms(100));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("max_cpus must be >= 1, got 0"), std::string::npos) << p.status().message();
}

TEST(HostSpeed, LargestChangeIsOverTheCpusBothProbesHold) {
  const std::vector<CpuSpeed> before = {{0, 10.0}, {1, 8.0}, {3, 5.0}};
  const std::vector<CpuSpeed> after = {{0, 10.5}, {1, 14.0}, {2, 99.0}};
  EXPECT_DOUBLE_EQ(largest_speed_change(before, after), 0.75);  // cpu1 8 -> 14; cpu2, cpu3 in one probe only
  EXPECT_DOUBLE_EQ(largest_speed_change(after, before), 6.0 / 14.0);
  EXPECT_DOUBLE_EQ(largest_speed_change({{0, 0.0}}, {{0, 5.0}}), 0.0);  // no timing to compare with
  EXPECT_DOUBLE_EQ(largest_speed_change({}, after), 0.0);
}

TEST(HostSpeed, LargestChangeNamesACpuByItsNodeAndNumber) {
  // Two L4 nodes on different hosts both have a cpu0: each is compared with
  // itself only.
  const std::vector<CpuSpeed> before = {{0, 10.0, 0}, {0, 20.0, 1}};
  const std::vector<CpuSpeed> after = {{0, 10.0, 0}, {0, 22.0, 1}};
  EXPECT_NEAR(largest_speed_change(before, after), 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(largest_speed_change({{0, 10.0, 0}}, {{0, 30.0, 1}}), 0.0);  // different nodes: nothing in common
  EXPECT_DOUBLE_EQ(largest_speed_change({{0, 10.0}}, {{0, 30.0, 0}}), 0.0);     // this process vs node 0
}

}  // namespace
}  // namespace taskring
