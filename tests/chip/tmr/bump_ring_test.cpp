// BumpRing (tmr/task_ring.hpp): the monotonic-counter ring allocator behind
// tmr's heap and dependency pool.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "tmr/task_ring.hpp"

namespace {

TEST(BumpRing, WrapsWithoutStraddlingTheEnd) {
  taskring::tmr::BumpRing r;
  r.set_size(10);
  uint64_t off = 0;
  ASSERT_TRUE(r.try_alloc(4, &off));
  EXPECT_EQ(off, 0u);
  ASSERT_TRUE(r.try_alloc(4, &off));
  EXPECT_EQ(off, 4u);
  EXPECT_FALSE(r.try_alloc(4, &off)) << "2 units left at the end, 0 free at the start";
  EXPECT_EQ(r.top, 8u) << "a failed allocation changes nothing";
  r.tail.store(4);  // first allocation retired
  ASSERT_TRUE(r.try_alloc(4, &off));
  EXPECT_EQ(off, 0u) << "skips the 2-unit gap at the end";
  EXPECT_EQ(r.top, 14u);
  EXPECT_FALSE(r.try_alloc(1, &off));
  r.tail.store(14);
  ASSERT_TRUE(r.try_alloc(10, &off)) << "an empty ring holds a full-size request";
  EXPECT_EQ(off, 0u) << "parked at 4, the full request wraps to 0";
  EXPECT_FALSE(r.try_alloc(11, &off));
}

// Random FIFO allocate/retire against a model: allocations never overlap,
// never leave [0, size), and a request fails only when it cannot fit.
TEST(BumpRing, RandomFifoModel) {
  std::mt19937 rng(7);
  for (uint64_t size : {4ull, 7ull, 16ull, 1024ull}) {
    taskring::tmr::BumpRing r;
    r.set_size(size);
    struct Live {
      uint64_t off, len, end_top;
    };
    std::vector<Live> live;  // FIFO
    for (int i = 0; i < 20000; ++i) {
      if (!live.empty() && rng() % 3 == 0) {
        r.tail.store(live.front().end_top);
        live.erase(live.begin());
        continue;
      }
      uint64_t need = 1 + rng() % size;
      uint64_t off = 0;
      uint64_t before = r.top;
      if (!r.try_alloc(need, &off)) {
        ASSERT_EQ(r.top, before);
        ASSERT_FALSE(live.empty()) << "an empty ring must take any request up to its size";
        // Must genuinely not fit: the live bytes plus the end gap exceed size.
        uint64_t pos = before % size;
        uint64_t skip = pos + need > size ? size - pos : 0;
        ASSERT_GT(before + skip + need - r.tail.load(), size);
        continue;
      }
      ASSERT_LE(off + need, size);
      for (const Live& l : live) ASSERT_TRUE(off + need <= l.off || l.off + l.len <= off) << "overlap";
      live.push_back(Live{off, need, r.top});
    }
  }
}

}  // namespace
