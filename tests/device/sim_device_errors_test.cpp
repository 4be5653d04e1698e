// SimDevice: every misuse is an error value that names what was wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "sim_test_util.hpp"

namespace taskring {
namespace {

using taskring::testing::make_sim;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

TEST(SimDeviceErrors, MallocArguments) {
  auto dev = make_sim();
  EXPECT_THAT(dev->malloc(0).status().message(), HasSubstr("size must be > 0"));
  for (uint64_t bad : {0ull, 3ull, 96ull, 8192ull}) {
    auto r = dev->malloc(64, bad, "t");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr("alignment " + std::to_string(bad)));
    EXPECT_THAT(r.status().message(), HasSubstr("malloc(64, 't')"));
  }
}

TEST(SimDeviceErrors, ArenaExhaustedNamesTheKnob) {
  auto dev = make_sim({}, 2);
  auto r = dev->malloc(3 << 20, 64, "huge");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(r.status().message(), HasSubstr("arena exhausted"));
  EXPECT_THAT(r.status().message(), HasSubstr("TASKRING_SIM_DEVICE_MEM_MB"));
  EXPECT_EQ(dev->counters().alloc_calls, 0u);
}

TEST(SimDeviceErrors, NullHostPointersAreRejected) {
  auto dev = make_sim();
  auto a = dev->malloc(64, 64, "buf");
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  Status to = dev->copy_to_device(*a, nullptr, 16);
  EXPECT_EQ(to.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(to.message(), HasSubstr("null host source for 16 bytes"));
  Status from = dev->copy_from_device(nullptr, *a, 16);
  EXPECT_EQ(from.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(from.message(), HasSubstr("null host destination for 16 bytes"));
  EXPECT_EQ(dev->counters().h2d_calls, 0u);
  EXPECT_TRUE(dev->free(*a).ok());
}

TEST(SimDeviceErrors, CopyOutOfBoundsNamesAllocationSizeAndRange) {
  auto dev = make_sim();
  auto a = dev->malloc(100, 64, "weights");
  ASSERT_TRUE(a.ok());
  std::vector<uint8_t> buf(200);
  Status s = dev->copy_to_device(*a + 60, buf.data(), 50);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_THAT(s.message(), HasSubstr("copy_to_device"));
  EXPECT_THAT(s.message(), HasSubstr("allocation #1 ('weights')"));
  EXPECT_THAT(s.message(), HasSubstr("of 100 bytes"));
  EXPECT_THAT(s.message(), HasSubstr("[60, 110)"));
  Status d = dev->copy_from_device(buf.data(), *a, 101);
  EXPECT_EQ(d.code(), StatusCode::kOutOfRange);
  EXPECT_THAT(d.message(), HasSubstr("copy_from_device"));
  EXPECT_THAT(d.message(), HasSubstr("[0, 101)"));
  EXPECT_EQ(dev->memset(*a + 99, 0, 2).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(dev->device_view(*a, 101).status().code(), StatusCode::kOutOfRange);
  // A huge length must not wrap around the bounds check.
  EXPECT_EQ(dev->copy_from_device(buf.data(), *a + 1, UINT64_MAX).code(), StatusCode::kOutOfRange);
  // Exactly to the end is fine.
  EXPECT_TRUE(dev->copy_to_device(*a + 90, buf.data(), 10).ok());
  ASSERT_TRUE(dev->free(*a).ok());
}

TEST(SimDeviceErrors, AddressesOutsideAnyAllocation) {
  auto dev = make_sim();
  auto a = dev->malloc(100);
  ASSERT_TRUE(a.ok());
  char c = 0;
  Status host = dev->copy_to_device(reinterpret_cast<uintptr_t>(&c), &c, 1);
  EXPECT_EQ(host.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(host.message(), HasSubstr("is not a sim device address"));
  // Inside the arena but in the unallocated tail.
  Status gap = dev->copy_from_device(&c, *a + (1 << 20), 1);
  EXPECT_EQ(gap.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(gap.message(), HasSubstr("not inside a live allocation"));
  // The padding after a 100-byte block belongs to no allocation either.
  EXPECT_EQ(dev->copy_from_device(&c, *a + 100, 1).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(dev->free(*a).ok());
}

TEST(SimDeviceErrors, UseAfterFreeIsReported) {
  auto dev = make_sim();
  auto a = dev->malloc(256, 64, "activations");
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(dev->free(*a).ok());
  // Allocating more must not hand the quarantined range out again.
  auto b = dev->malloc(256);
  ASSERT_TRUE(b.ok());
  EXPECT_NE(*b, *a);
  char buf[16] = {};
  struct Op {
    const char* name;
    Status s;
  };
  Op ops[] = {{"copy_to_device", dev->copy_to_device(*a, buf, 16)},
              {"copy_from_device", dev->copy_from_device(buf, *a + 8, 8)},
              {"memset", dev->memset(*a, 0, 16)},
              {"device_view", dev->device_view(*a, 16).status()}};
  for (const Op& op : ops) {
    EXPECT_EQ(op.s.code(), StatusCode::kFailedPrecondition) << op.name;
    EXPECT_THAT(op.s.message(),
                HasSubstr(std::string(op.name) + ": use after free of allocation #1 ('activations') at 0x"));
  }
  ASSERT_TRUE(dev->free(*b).ok());
}

TEST(SimDeviceErrors, DoubleFreeAndBadFrees) {
  auto dev = make_sim();
  auto a = dev->malloc(128, 64, "x");
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(dev->free(*a).ok());
  Status twice = dev->free(*a);
  EXPECT_EQ(twice.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(twice.message(), HasSubstr("double free of allocation #1 ('x')"));
  EXPECT_EQ(dev->counters().free_calls, 1u);

  auto b = dev->malloc(128);
  ASSERT_TRUE(b.ok());
  Status inside = dev->free(*b + 64);
  EXPECT_EQ(inside.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(inside.message(), HasSubstr("points 64 bytes inside allocation #2"));
  Status never = dev->free(*b + (1 << 20));
  EXPECT_THAT(never.message(), HasSubstr("is not an allocation of this device"));
  Status host = dev->free(0x1000);
  EXPECT_THAT(host.message(), HasSubstr("is not a sim device address"));
  EXPECT_EQ(dev->counters().live_allocations, 1u);  // failed frees change nothing
  ASSERT_TRUE(dev->free(*b).ok());
  EXPECT_TRUE(dev->finalize().ok());
}

TEST(SimDeviceErrors, BadConfigIsRejected) {
  SimDeviceConfig cfg;
  cfg.arena_bytes = 1 << 20;
  cfg.topology.clusters = 0;
  EXPECT_THAT(create_sim_device(cfg).status().message(), HasSubstr("clusters 0 outside [1, 64]"));
  cfg.topology.clusters = 8;
  cfg.topology.executor_threads = 300;
  EXPECT_THAT(create_sim_device(cfg).status().message(), HasSubstr("executor threads 300 outside [1, 256]"));
  cfg.topology.executor_threads = 2;
  cfg.arena_bytes = 4096;
  EXPECT_THAT(create_sim_device(cfg).status().message(), HasSubstr("arena 4096 bytes"));
}

// Device addresses are never host pointers: using one as such faults at
// once (the base is non-canonical on x86-64) instead of corrupting memory.
TEST(SimDeviceDeathTest, DereferencingADeviceAddressFaults) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto dev = make_sim({}, 8);
  auto a = dev->malloc(64);
  ASSERT_TRUE(a.ok());
  volatile char* p = reinterpret_cast<volatile char*>(static_cast<uintptr_t>(*a));
  EXPECT_DEATH({ *p = 1; }, "");
  EXPECT_DEATH({ (void)*p; }, "");
  ASSERT_TRUE(dev->free(*a).ok());
}

}  // namespace
}  // namespace taskring
