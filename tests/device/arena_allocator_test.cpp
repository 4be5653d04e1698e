// The arena allocator behind SimDevice (internal to src/device).
#include "sim/arena_allocator.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace taskring::sim {
namespace {

TEST(ArenaAllocator, FirstFitAndAlignment) {
  ArenaAllocator a(1 << 20, QuarantineLimits{0, 0});
  auto x = a.allocate(100, 64, "x");
  auto y = a.allocate(100, 4096, "y");
  ASSERT_TRUE(x && y);
  EXPECT_EQ(*x, 0u);
  EXPECT_EQ(*y, 4096u);
  // The gap left by y's alignment is used by the next small block.
  auto z = a.allocate(64, 64, "z");
  ASSERT_TRUE(z);
  EXPECT_EQ(*z, 128u);
  EXPECT_EQ(a.find_live(*x + 99)->serial, 1u);
  EXPECT_EQ(a.find_live(*x + 100), nullptr);
  EXPECT_EQ(a.find_live(*y)->tag, "y");
}

TEST(ArenaAllocator, CoalescesBackToOneRange) {
  ArenaAllocator a(1 << 20, QuarantineLimits{0, 0});
  std::vector<uint64_t> offs;
  for (int i = 0; i < 16; ++i) offs.push_back(*a.allocate(1000, 64, ""));
  // Free in an interleaved order so both neighbours get merged.
  for (int i = 0; i < 16; i += 2) a.release(offs[i]);
  for (int i = 1; i < 16; i += 2) a.release(offs[i]);
  EXPECT_EQ(a.free_bytes(), a.arena_bytes());
  auto all = a.allocate(a.arena_bytes(), 64, "all");
  ASSERT_TRUE(all);
  EXPECT_EQ(*all, 0u);
}

TEST(ArenaAllocator, QuarantineDelaysReuseAndKeepsTheRecord) {
  ArenaAllocator a(1 << 20, QuarantineLimits{2, 1 << 20});
  uint64_t x = *a.allocate(256, 64, "x");
  a.release(x);
  ASSERT_NE(a.find_freed(x + 10), nullptr);
  EXPECT_EQ(a.find_freed(x + 10)->tag, "x");
  EXPECT_NE(*a.allocate(256, 64, "y"), x);
  uint64_t p = *a.allocate(64, 64, "p");
  uint64_t q = *a.allocate(64, 64, "q");
  a.release(p);
  a.release(q);  // third entry: x leaves the quarantine
  EXPECT_EQ(a.find_freed(x), nullptr);
  EXPECT_EQ(a.quarantined(), 2u);
  auto recycled = a.take_recycled();
  ASSERT_EQ(recycled.size(), 1u);
  EXPECT_EQ(recycled[0].first, x);
  EXPECT_TRUE(a.take_recycled().empty());
}

TEST(ArenaAllocator, FullArenaDrainsTheQuarantine) {
  ArenaAllocator a(1 << 20, QuarantineLimits{1000, 1 << 30});
  uint64_t x = *a.allocate(1 << 20, 64, "all");
  a.release(x);
  auto again = a.allocate(1 << 20, 64, "again");
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, 0u);
  EXPECT_FALSE(a.allocate(64, 64, "none"));
  EXPECT_FALSE(a.allocate(0, 64, "zero"));
}

TEST(ArenaAllocator, RandomChurnKeepsBlocksDisjoint) {
  ArenaAllocator a(4 << 20, QuarantineLimits{16, 256 << 10});
  std::mt19937 rng(7);
  std::vector<uint64_t> live;
  for (int i = 0; i < 3000; ++i) {
    if (!live.empty() && (rng() % 2 == 0 || live.size() > 200)) {
      size_t k = rng() % live.size();
      a.release(live[k]);
      live.erase(live.begin() + static_cast<long>(k));
    } else if (auto off = a.allocate(1 + rng() % 20000, uint64_t{1} << (rng() % 13), "")) {
      live.push_back(*off);
    }
  }
  std::vector<Block> blocks = a.live_blocks();
  ASSERT_EQ(blocks.size(), live.size());
  for (size_t i = 1; i < blocks.size(); ++i) {
    EXPECT_GE(blocks[i].offset, blocks[i - 1].offset + blocks[i - 1].reserved);
  }
  for (uint64_t off : live) a.release(off);
  // Everything coalesces back: a failing request drains the quarantine.
  auto all = a.allocate(a.arena_bytes(), 64, "all");
  ASSERT_TRUE(all);
  EXPECT_EQ(*all, 0u);
}

}  // namespace
}  // namespace taskring::sim
