// The transfer cost model: parsing, cost, and per-copy accounting.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "sim_test_util.hpp"

namespace taskring {
namespace {

using taskring::testing::make_sim;
using ::testing::HasSubstr;

TEST(LinkModel, OffCostsNothing) {
  LinkModel off;
  EXPECT_EQ(off.cost_ns(1 << 30), 0u);
  EXPECT_EQ(off.describe(), "off");
}

TEST(LinkModel, LatencyPlusBandwidth) {
  auto m = LinkModel::parse("K", "17,25");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->cost_ns(0), 17'000u);
  EXPECT_EQ(m->cost_ns(25'000), 17'000u + 1'000u);  // 25 kB at 25 GB/s = 1 us
  EXPECT_EQ(m->describe(), "17 us + 25 GB/s");
  auto frac = LinkModel::parse("K", " 0.5 , 12.5 ");
  ASSERT_TRUE(frac.ok());
  EXPECT_EQ(frac->cost_ns(125), 510u);
  for (const char* off : {"off", "OFF", "0"}) {
    auto o = LinkModel::parse("K", off);
    ASSERT_TRUE(o.ok()) << off;
    EXPECT_FALSE(o->enabled);
  }
}

TEST(LinkModel, BadTextNamesKnob) {
  for (const char* bad :
       {"", "17", "17,", ",25", "17;25", "x,25", "17,0", "17,-3", "2000000,1", "17,20000", "nan,1", "inf,1"}) {
    auto m = LinkModel::parse("TASKRING_SIM_LINK", bad);
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_THAT(m.status().message(), HasSubstr("TASKRING_SIM_LINK='" + std::string(bad) + "'"));
  }
}

TEST(LinkModel, ChargedPerCopyCallWhenOn) {
  auto m = LinkModel::parse("K", "2,10");  // 2 us + 0.1 ns per byte
  ASSERT_TRUE(m.ok());
  auto dev = make_sim(*m);
  auto a = dev->malloc(10'000);
  ASSERT_TRUE(a.ok());
  std::vector<uint8_t> buf(10'000);
  ASSERT_TRUE(dev->copy_to_device(*a, buf.data(), 10'000).ok());
  ASSERT_TRUE(dev->copy_from_device(buf.data(), *a, 1'000).ok());
  ASSERT_TRUE(dev->memset(*a, 0, 10'000).ok());  // device-side: not a link transfer
  // Charged time is the model's, not the measured wait, so this is exact.
  EXPECT_EQ(dev->counters().link_charged_ns, m->cost_ns(10'000) + m->cost_ns(1'000));
  EXPECT_EQ(dev->counters().link_charged_ns, 2'000u + 1'000u + 2'000u + 100u);
  // A rejected copy charges nothing.
  EXPECT_FALSE(dev->copy_to_device(*a, buf.data(), 10'001).ok());
  EXPECT_EQ(dev->counters().link_charged_ns, 5'100u);
  dev->reset_transfer_counters();
  EXPECT_EQ(dev->counters().link_charged_ns, 0u);
  ASSERT_TRUE(dev->free(*a).ok());
}

TEST(LinkModel, NothingChargedWhenOff) {
  auto dev = make_sim();
  auto a = dev->malloc(4096);
  ASSERT_TRUE(a.ok());
  std::vector<uint8_t> buf(4096);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(dev->copy_to_device(*a, buf.data(), buf.size()).ok());
  EXPECT_EQ(dev->counters().link_charged_ns, 0u);
  ASSERT_TRUE(dev->free(*a).ok());
}

}  // namespace
}  // namespace taskring
