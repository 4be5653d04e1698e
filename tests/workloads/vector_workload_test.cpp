#include <gtest/gtest.h>

#include "taskring/workloads/vector.hpp"
#include "workload_test_util.hpp"

namespace taskring::workloads {
namespace {

class VectorWorkloadTest : public ::testing::TestWithParam<int> {};

TEST_P(VectorWorkloadTest, EveryElementIs47) {
  auto w = make_vector_workload();
  ASSERT_TRUE(w->params().set("size", 4096).ok());
  testing::expect_rounds_pass(*w, GetParam());
  for (float x : w->output()) ASSERT_EQ(x, 47.0f);
}

INSTANTIATE_TEST_SUITE_P(Threads, VectorWorkloadTest, ::testing::Values(1, 2));

TEST(VectorWorkload, CorruptedElementFailsTheGolden) {
  auto w = make_vector_workload();
  ASSERT_TRUE(w->params().set("size", 1000).ok());
  testing::expect_corruption_detected(*w, 517, 1.0f);
}

}  // namespace
}  // namespace taskring::workloads
