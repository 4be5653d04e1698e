// SimDevice: the happy paths (allocation, copies, counters, pinned buffers).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "sim_test_util.hpp"

namespace taskring {
namespace {

using taskring::testing::make_sim;
using ::testing::HasSubstr;

TEST(SimDevice, NameAndTopology) {
  SimDeviceConfig cfg;
  cfg.arena_bytes = 8 << 20;
  cfg.topology.clusters = 3;
  cfg.topology.executor_threads = 5;
  auto d = create_sim_device(cfg);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)->name(), "sim");
  Topology t = (*d)->topology();
  EXPECT_EQ(t.clusters, 3);
  EXPECT_EQ(t.aic_count(), 3);
  EXPECT_EQ(t.aiv_count(), 6);
  EXPECT_EQ(t.core_count(), 9);
  EXPECT_EQ(t.executor_threads, 5);
  EXPECT_TRUE((*d)->finalize().ok());
}

TEST(SimDevice, RoundTripH2DThenD2H) {
  auto dev = make_sim();
  std::vector<uint8_t> in(10'000), out(10'000, 0);
  std::iota(in.begin(), in.end(), 0);
  auto a = dev->malloc(in.size(), 64, "roundtrip");
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  ASSERT_TRUE(dev->copy_to_device(*a, in.data(), in.size()).ok());
  ASSERT_TRUE(dev->copy_from_device(out.data(), *a, out.size()).ok());
  EXPECT_EQ(in, out);
  // A sub-range at an offset.
  uint8_t part[16] = {};
  ASSERT_TRUE(dev->copy_from_device(part, *a + 100, sizeof(part)).ok());
  EXPECT_EQ(0, std::memcmp(part, in.data() + 100, sizeof(part)));
  ASSERT_TRUE(dev->free(*a).ok());
  EXPECT_TRUE(dev->finalize().ok());
}

TEST(SimDevice, MemsetFillsTheRange) {
  auto dev = make_sim();
  auto a = dev->malloc(256);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(dev->memset(*a, 0, 256).ok());
  ASSERT_TRUE(dev->memset(*a + 16, 0xAB, 32).ok());
  std::vector<uint8_t> out(256);
  ASSERT_TRUE(dev->copy_from_device(out.data(), *a, 256).ok());
  for (int i = 0; i < 256; ++i) EXPECT_EQ(out[i], (i >= 16 && i < 48) ? 0xAB : 0) << i;
  ASSERT_TRUE(dev->free(*a).ok());
}

TEST(SimDevice, AllocationsHonourAlignmentAndDoNotOverlap) {
  auto dev = make_sim();
  std::vector<std::pair<DeviceAddr, uint64_t>> blocks;
  for (uint64_t align : {1, 2, 64, 128, 256, 512, 1024, 2048, 4096}) {
    for (uint64_t bytes : {1, 7, 100, 4097}) {
      auto a = dev->malloc(bytes, align);
      ASSERT_TRUE(a.ok()) << a.status().to_string();
      EXPECT_EQ(*a % align, 0u) << "align " << align;
      EXPECT_EQ(*a % 64, 0u);  // never shares a cache line with a neighbour
      EXPECT_TRUE(dev->is_device_address(*a));
      blocks.emplace_back(*a, bytes);
    }
  }
  std::sort(blocks.begin(), blocks.end());
  for (size_t i = 1; i < blocks.size(); ++i) {
    EXPECT_GE(blocks[i].first, blocks[i - 1].first + blocks[i - 1].second);
  }
  for (auto [a, n] : blocks) ASSERT_TRUE(dev->free(a).ok());
  EXPECT_TRUE(dev->finalize().ok());
}

TEST(SimDevice, AddressesAreInTheNonCanonicalDeviceRange) {
  auto dev = make_sim();
  auto a = dev->malloc(64);
  ASSERT_TRUE(a.ok());
  EXPECT_GE(*a, kSimDeviceAddressBase);
  EXPECT_LT(*a, kSimDeviceAddressBase + (64ull << 20));
  EXPECT_FALSE(dev->is_device_address(0x1000));
  EXPECT_FALSE(dev->is_device_address(kSimDeviceAddressBase + (64ull << 20)));
  // Bit 47 set, bits 48..63 clear: not a canonical x86-64 address.
  EXPECT_NE(*a & (1ull << 47), 0u);
  EXPECT_EQ(*a >> 48, 0u);
  ASSERT_TRUE(dev->free(*a).ok());
}

TEST(SimDevice, DeviceViewSeesTheCopiedBytes) {
  auto dev = make_sim();
  auto a = dev->malloc(64);
  ASSERT_TRUE(a.ok());
  const char msg[] = "device bytes";
  ASSERT_TRUE(dev->copy_to_device(*a, msg, sizeof(msg)).ok());
  auto v = dev->device_view(*a, sizeof(msg));
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  EXPECT_STREQ(static_cast<const char*>(*v), msg);
  EXPECT_EQ(dev->device_view_unchecked(*a), *v);
  EXPECT_EQ(static_cast<char*>(dev->device_view_unchecked(*a + 5)), static_cast<char*>(*v) + 5);
  EXPECT_EQ(dev->device_view_unchecked(0x1234), nullptr);
  // Kernel-side writes are visible to D2H.
  static_cast<char*>(*v)[0] = 'D';
  char back[sizeof(msg)];
  ASSERT_TRUE(dev->copy_from_device(back, *a, sizeof(back)).ok());
  EXPECT_EQ(back[0], 'D');
  ASSERT_TRUE(dev->free(*a).ok());
}

TEST(SimDevice, CountersTrackCallsBytesAndPeak) {
  auto dev = make_sim();
  auto a = dev->malloc(1000, 64, "a");
  auto b = dev->malloc(3000, 64, "b");
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<uint8_t> buf(3000, 1);
  ASSERT_TRUE(dev->copy_to_device(*a, buf.data(), 1000).ok());
  ASSERT_TRUE(dev->copy_to_device(*b, buf.data(), 3000).ok());
  ASSERT_TRUE(dev->copy_from_device(buf.data(), *b, 2000).ok());
  ASSERT_TRUE(dev->memset(*a, 0, 10).ok());
  DeviceCounters c = dev->counters();
  EXPECT_EQ(c.h2d_calls, 2u);
  EXPECT_EQ(c.h2d_bytes, 4000u);
  EXPECT_EQ(c.d2h_calls, 1u);
  EXPECT_EQ(c.d2h_bytes, 2000u);
  EXPECT_EQ(c.memset_calls, 1u);
  EXPECT_EQ(c.alloc_calls, 2u);
  EXPECT_EQ(c.live_allocations, 2u);
  EXPECT_EQ(c.live_bytes, 4000u);
  EXPECT_EQ(c.peak_bytes, 4000u);
  EXPECT_EQ(c.link_charged_ns, 0u);  // link model off by default
  ASSERT_TRUE(dev->free(*b).ok());
  c = dev->counters();
  EXPECT_EQ(c.free_calls, 1u);
  EXPECT_EQ(c.live_bytes, 1000u);
  EXPECT_EQ(c.peak_bytes, 4000u);
  // A failed copy is not counted.
  EXPECT_FALSE(dev->copy_to_device(*a, buf.data(), 1001).ok());
  EXPECT_EQ(dev->counters().h2d_calls, 2u);
  dev->reset_transfer_counters();
  c = dev->counters();
  EXPECT_EQ(c.h2d_calls + c.h2d_bytes + c.d2h_calls + c.d2h_bytes + c.memset_calls, 0u);
  EXPECT_EQ(c.live_allocations, 1u);  // allocation state survives the reset
  ASSERT_TRUE(dev->free(*a).ok());
  EXPECT_EQ(dev->counters().live_bytes, 0u);
}

TEST(SimDevice, LeaksAreListedAndReportedAtFinalize) {
  auto dev = make_sim();
  auto a = dev->malloc(100, 64, "kept");
  auto b = dev->malloc(200, 64, "freed");
  auto c = dev->malloc(300);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  ASSERT_TRUE(dev->free(*b).ok());
  std::vector<LeakRecord> live = dev->live_allocations();
  ASSERT_EQ(live.size(), 2u);
  EXPECT_EQ(live[0].serial, 1u);
  EXPECT_EQ(live[0].tag, "kept");
  EXPECT_EQ(live[0].bytes, 100u);
  EXPECT_EQ(live[0].addr, *a);
  EXPECT_EQ(live[1].serial, 3u);
  Status s = dev->finalize();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("2 device allocation(s) leaked (400 bytes)"));
  EXPECT_THAT(s.message(), HasSubstr("#1 'kept' 100 B"));
  EXPECT_THAT(s.message(), HasSubstr("#3 300 B"));
  // Idempotent: the same report again, and the device is closed for business.
  EXPECT_EQ(dev->finalize(), s);
  EXPECT_EQ(dev->malloc(8).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(dev->copy_to_device(*a, "x", 1).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(dev->device_view_unchecked(*a), nullptr);
}

TEST(SimDevice, CleanFinalizeIsOk) {
  auto dev = make_sim();
  EXPECT_TRUE(dev->finalize().ok());
  EXPECT_TRUE(dev->finalize().ok());
}

TEST(SimDevice, PinnedBuffersArePageAlignedAndTracked) {
  auto dev = make_sim();
  auto p = dev->alloc_pinned(10'000);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*p) % 4096, 0u);
  std::memset(*p, 0x5A, 10'000);  // really host memory
  EXPECT_EQ(dev->counters().pinned_live_bytes, 10'000u);
  auto d = dev->malloc(10'000);
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE(dev->copy_to_device(*d, *p, 10'000).ok());
  ASSERT_TRUE(dev->free(*d).ok());
  ASSERT_TRUE(dev->free_pinned(*p).ok());
  EXPECT_EQ(dev->counters().pinned_live_bytes, 0u);
  Status twice = dev->free_pinned(*p);
  EXPECT_EQ(twice.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(twice.message(), HasSubstr("not a live pinned buffer"));
  int on_stack = 0;
  EXPECT_FALSE(dev->free_pinned(&on_stack).ok());
  EXPECT_FALSE(dev->alloc_pinned(0).ok());
  EXPECT_TRUE(dev->finalize().ok());
}

TEST(SimDevice, PinnedLeaksAreReported) {
  auto dev = make_sim();
  ASSERT_TRUE(dev->alloc_pinned(4096).ok());
  Status s = dev->finalize();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("1 pinned host buffer(s) leaked (4096 bytes)"));
}

TEST(SimDevice, FreedMemoryIsReusedAfterQuarantine) {
  // 4 MiB arena, 1 MiB blocks: the quarantine (at most a quarter of the
  // arena) must give ranges back, and a failing malloc drains it entirely.
  auto dev = make_sim({}, 4);
  for (int round = 0; round < 20; ++round) {
    auto a = dev->malloc(1 << 20);
    auto b = dev->malloc(1 << 20);
    ASSERT_TRUE(a.ok()) << "round " << round << ": " << a.status().to_string();
    ASSERT_TRUE(b.ok()) << "round " << round << ": " << b.status().to_string();
    ASSERT_TRUE(dev->free(*a).ok());
    ASSERT_TRUE(dev->free(*b).ok());
  }
  auto all = dev->malloc(4 << 20);
  EXPECT_TRUE(all.ok()) << all.status().to_string();
  if (all.ok()) {
    EXPECT_TRUE(dev->free(*all).ok());
  }
  EXPECT_TRUE(dev->finalize().ok());
}

}  // namespace
}  // namespace taskring
