// StartIndex (deps/start_index.hpp): the two-level sorted array behind a
// large TensorMap bucket must behave as a std::multimap ordered by key
// (equal keys in insertion order) under random adds, seeks, walks and
// erases, across chunk splits and chunks that empty out.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "deps/start_index.hpp"
#include "test_scale.hpp"

namespace taskring::deps {
namespace {

std::vector<std::pair<uint64_t, uint32_t>> walk(const StartIndex& ix) {
  std::vector<std::pair<uint64_t, uint32_t>> out;
  for (StartIndex::Pos p = ix.begin(); !ix.at_end(p); p = ix.next(p)) out.emplace_back(ix.key(p), ix.entry(p));
  return out;
}

std::vector<std::pair<uint64_t, uint32_t>> walk(const std::multimap<uint64_t, uint32_t>& m) {
  return {m.begin(), m.end()};
}

TEST(StartIndex, MatchesAMultimapUnderRandomOperations) {
  std::mt19937_64 g(20261203);
  const int ops = taskring::testing::test_scale(40000, 8000, 400000);
  for (uint64_t key_range : {8ull, 1000ull, 1ull << 40}) {  // many duplicates .. almost none
    SCOPED_TRACE("key range " + std::to_string(key_range));
    StartIndex ix;
    std::multimap<uint64_t, uint32_t> model;
    uint32_t next_entry = 0;
    for (int op = 0; op < ops; ++op) {
      const uint64_t key = g() % key_range;
      // Grow to a few thousand items, then hover around that size.
      if (g() % 100 < (model.size() < 3000 ? 60u : 45u)) {
        ix.add(key, key + 1 + g() % 64, next_entry);
        model.emplace(key, next_entry);
        ++next_entry;
      } else {
        // Seek, then erase every k-th item of a short walk.
        StartIndex::Pos p = ix.lower_bound(key);
        auto it = model.lower_bound(key);
        const int k = 1 + static_cast<int>(g() % 3);
        for (int step = 0; step < 6 && it != model.end(); ++step) {
          ASSERT_FALSE(ix.at_end(p)) << "op " << op;
          ASSERT_EQ(ix.key(p), it->first) << "op " << op;
          ASSERT_EQ(ix.entry(p), it->second) << "op " << op;
          if (step % k == 0) {
            p = ix.erase(p);
            it = model.erase(it);
          } else {
            p = ix.next(p);
            ++it;
          }
        }
        if (it == model.end()) {
          ASSERT_TRUE(ix.at_end(p)) << "op " << op;
        }
      }
      ASSERT_EQ(ix.size(), model.size());
      if (op % 997 == 0) {
        ASSERT_EQ(walk(ix), walk(model)) << "op " << op;
      }
    }
    ASSERT_EQ(walk(ix), walk(model));
    // Drain it completely: every chunk empties and goes.
    for (StartIndex::Pos p = ix.begin(); !ix.at_end(p);) p = ix.erase(p);
    EXPECT_TRUE(ix.empty());
    EXPECT_TRUE(ix.at_end(ix.begin()));
    EXPECT_TRUE(ix.at_end(ix.lower_bound(0)));
  }
}

TEST(StartIndex, EndByteIsKeptWithTheEntry) {
  StartIndex ix;
  for (uint32_t i = 0; i < 500; ++i) ix.add(uint64_t{499 - i} * 256, uint64_t{499 - i} * 256 + 100, i);
  StartIndex::Pos p = ix.lower_bound(256 * 7);
  ASSERT_FALSE(ix.at_end(p));
  EXPECT_EQ(ix.key(p), 256u * 7);
  EXPECT_EQ(ix.end_byte(p), 256u * 7 + 100);
  EXPECT_EQ(ix.entry(p), 492u);
}

}  // namespace
}  // namespace taskring::deps
