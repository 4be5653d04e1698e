// DepMap (src/node/dep_map.hpp) on its own: the L3 dependency rules with
// exact expectations, so that a dropped edge fails here deterministically
// instead of through a race in a node workload. The edge that a broken build
// dropped unnoticed: write-after-read for an OUTPUT_EXISTING writer.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <vector>

#include "dep_map.hpp"

namespace taskring::node {
namespace {

struct Task {
  std::vector<ChipTensor> tensors;
  std::vector<TensorArgType> tags;
};

// The producers of `t` as task `index`, sorted and without duplicates.
std::vector<uint64_t> add(DepMap& m, uint64_t index, const Task& t) {
  std::vector<uint64_t> p;
  m.add_task(index, t.tensors, t.tags, &p);
  std::sort(p.begin(), p.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  return p;
}

class DepMapTest : public ::testing::Test {
 protected:
  std::array<float, 256> buf{};
  ChipTensor whole() {
    uint32_t shape[1] = {256};
    return make_tensor_external(buf.data(), shape, 1, DataType::FLOAT32);
  }
  ChipTensor range(uint32_t first, uint32_t count) { return whole().view({count}, {first}); }
  DepMap m;
};

TEST_F(DepMapTest, OutputExistingWriterWaitsForEarlierReaders) {
  m.reset();
  EXPECT_TRUE(add(m, 0, {{whole()}, {TensorArgType::INPUT}}).empty());
  EXPECT_TRUE(add(m, 1, {{whole()}, {TensorArgType::INPUT}}).empty());
  // Write-after-read: the OUTPUT_EXISTING writer waits for both readers.
  EXPECT_EQ(add(m, 2, {{whole()}, {TensorArgType::OUTPUT_EXISTING}}), (std::vector<uint64_t>{0, 1}));
  // Read-after-write: a later reader waits for that writer.
  EXPECT_EQ(add(m, 3, {{whole()}, {TensorArgType::INPUT}}), (std::vector<uint64_t>{2}));
}

TEST_F(DepMapTest, WriteAfterReadOnOverlappingBytesOnly) {
  for (TensorArgType writer : {TensorArgType::OUTPUT_EXISTING, TensorArgType::INOUT}) {
    m.reset();
    EXPECT_TRUE(add(m, 0, {{range(0, 64)}, {TensorArgType::INPUT}}).empty());
    EXPECT_TRUE(add(m, 1, {{range(64, 64)}, {TensorArgType::INPUT}}).empty());
    // Bytes [63, 64) overlap reader 0 only; [64, 65) reader 1 only.
    EXPECT_EQ(add(m, 2, {{range(63, 1)}, {writer}}), (std::vector<uint64_t>{0}));
    EXPECT_EQ(add(m, 3, {{range(64, 1)}, {writer}}), (std::vector<uint64_t>{1}));
    // Disjoint from every reader and writer so far: no edge.
    EXPECT_TRUE(add(m, 4, {{range(200, 8)}, {writer}}).empty());
  }
}

TEST_F(DepMapTest, CompletedReadersAndNoDepAreNotWaitedFor) {
  m.reset();
  EXPECT_TRUE(add(m, 0, {{whole()}, {TensorArgType::INPUT}}).empty());
  EXPECT_TRUE(add(m, 1, {{whole()}, {TensorArgType::INPUT}}).empty());
  m.mark_completed(0);
  EXPECT_EQ(add(m, 2, {{whole()}, {TensorArgType::OUTPUT_EXISTING}}), (std::vector<uint64_t>{1}));
  EXPECT_TRUE(add(m, 3, {{whole()}, {TensorArgType::NO_DEP}}).empty());
}

}  // namespace
}  // namespace taskring::node
