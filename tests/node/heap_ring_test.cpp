// HeapRing: FIFO bump allocation over the node's heap ring. Blocks come in
// order, 1024-aligned, wrap once the top is used, and go back oldest first
// once their scope ended and every task before its fence finished.
#include "dag/heap_ring.hpp"

#include <gtest/gtest.h>

namespace taskring::node {
namespace {

constexpr uint64_t kBase = 1 << 20;
constexpr uint64_t kA = HeapRing::kAlign;

TEST(HeapRing, HandsOutAlignedBlocksInOrderFromItsBase) {
  HeapRing h(kBase, 8 * kA);
  EXPECT_EQ(h.try_alloc(1, 0), kBase);
  EXPECT_EQ(h.try_alloc(kA, 0), kBase + kA);
  EXPECT_EQ(h.try_alloc(kA + 1, 0), kBase + 2 * kA);  // two blocks' worth
  EXPECT_EQ(h.try_alloc(0, 0), kBase + 4 * kA);       // a 0-byte block still takes one unit
  EXPECT_EQ(h.in_use(), 5 * kA);
  EXPECT_EQ(h.capacity(), 8 * kA);
}

TEST(HeapRing, RefusesWhatDoesNotFitWithoutTakingAnything) {
  HeapRing h(kBase, 4 * kA);
  EXPECT_FALSE(h.try_alloc(4 * kA + 1, 0).has_value());
  ASSERT_TRUE(h.try_alloc(3 * kA, 0).has_value());
  EXPECT_FALSE(h.try_alloc(2 * kA, 0).has_value());
  EXPECT_EQ(h.in_use(), 3 * kA);
  EXPECT_EQ(h.try_alloc(kA, 0), kBase + 3 * kA);  // the last unit still fits
  EXPECT_FALSE(h.try_alloc(1, 0).has_value());
}

TEST(HeapRing, ABlockGoesOnlyOnceItsScopeEndedAndItsFenceRetired) {
  HeapRing h(kBase, 4 * kA);
  ASSERT_TRUE(h.try_alloc(kA, 1).has_value());
  EXPECT_FALSE(h.release(1000));  // scope 1 still open: no fence yet
  h.close_scope(1, 5);            // ended when the run had 5 tasks
  EXPECT_FALSE(h.release(4));     // task 4 not finished
  EXPECT_TRUE(h.release(5));
  EXPECT_EQ(h.in_use(), 0u);
}

TEST(HeapRing, ReleasesOldestFirstEvenWhenAYoungerScopeEndedFirst) {
  HeapRing h(kBase, 4 * kA);
  ASSERT_TRUE(h.try_alloc(kA, 1).has_value());  // outer scope 1
  ASSERT_TRUE(h.try_alloc(kA, 2).has_value());  // inner scope 2
  h.close_scope(2, 3);
  EXPECT_FALSE(h.release(10));  // the oldest (scope 1) is still open
  EXPECT_EQ(h.in_use(), 2 * kA);
  h.close_scope(1, 7);
  EXPECT_TRUE(h.release(7));
  EXPECT_EQ(h.in_use(), 0u);
}

TEST(HeapRing, CloseScopeSetsOnlyItsOpenBlocks) {
  HeapRing h(kBase, 8 * kA);
  ASSERT_TRUE(h.try_alloc(kA, 1).has_value());
  h.close_scope(1, 2);
  ASSERT_TRUE(h.try_alloc(kA, 1).has_value());  // scope id 1 reused after it ended
  h.close_scope(1, 9);                          // must not move the first block's fence
  EXPECT_TRUE(h.release(2));
  EXPECT_EQ(h.in_use(), kA);
  EXPECT_FALSE(h.release(8));
  EXPECT_TRUE(h.release(9));
}

TEST(HeapRing, WrapsToTheBottomOnceTheOldestBlocksRetired) {
  HeapRing h(kBase, 4 * kA);
  ASSERT_EQ(h.try_alloc(2 * kA, 0), kBase);
  ASSERT_EQ(h.try_alloc(kA, 1), kBase + 2 * kA);
  h.close_scope(0, 1);
  ASSERT_TRUE(h.release(1));  // [0, 2A) free, [2A, 3A) in use, [3A, 4A) free
  // 2A do not fit at the top (A left) but do at the bottom.
  EXPECT_EQ(h.try_alloc(2 * kA, 2), kBase);
  // Wrapped: from the oldest block to the end, then [0, 2A); the unit skipped
  // at the top counts as used until the oldest block passes it.
  EXPECT_EQ(h.in_use(), 4 * kA);
  // Wrapped, the free space is between the newest end and the oldest begin.
  EXPECT_FALSE(h.try_alloc(kA, 3).has_value());
  h.close_scope(1, 2);
  h.close_scope(2, 2);
  EXPECT_TRUE(h.release(2));
  EXPECT_EQ(h.in_use(), 0u);
}

TEST(HeapRing, ClearDropsEveryBlock) {
  HeapRing h(kBase, 4 * kA);
  ASSERT_TRUE(h.try_alloc(3 * kA, 4).has_value());
  h.clear();
  EXPECT_EQ(h.in_use(), 0u);
  EXPECT_EQ(h.try_alloc(4 * kA, 0), kBase);
}

}  // namespace
}  // namespace taskring::node
