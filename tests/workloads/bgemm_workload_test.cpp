#include <gtest/gtest.h>

#include "taskring/workloads/bgemm.hpp"
#include "workload_test_util.hpp"

namespace taskring::workloads {
namespace {

// Small: 2 batches of a 2x3 C grid with 3 k-splits of 32x32 tiles (36 tasks).
void make_small(Workload& w) {
  testing::set_params(w, {{"batch", 2}, {"grid_m", 2}, {"grid_n", 3}, {"grid_k", 3}, {"tile", 32}});
}

class BgemmWorkloadTest : public ::testing::TestWithParam<int> {};

TEST_P(BgemmWorkloadTest, MatchesDoubleReference) {
  auto w = make_bgemm_workload();
  make_small(*w);
  EXPECT_EQ(w->expected_tasks(), 36u);
  testing::expect_rounds_pass(*w, GetParam());
}

TEST_P(BgemmWorkloadTest, SingleKSplitAndOddTile) {
  auto w = make_bgemm_workload();
  testing::set_params(*w, {{"batch", 3}, {"grid_m", 1}, {"grid_n", 2}, {"grid_k", 1}, {"tile", 24}});
  testing::expect_rounds_pass(*w, GetParam(), 1);
}

INSTANTIATE_TEST_SUITE_P(Threads, BgemmWorkloadTest, ::testing::Values(1, 2));

TEST(BgemmWorkload, CorruptedElementFailsTheGolden) {
  auto w = make_bgemm_workload();
  make_small(*w);
  testing::expect_corruption_detected(*w, 1234, 0.5f);
}

TEST(BgemmWorkload, OversizedProblemIsRejected) {
  auto w = make_bgemm_workload();
  testing::set_params(*w, {{"batch", 4096}, {"grid_m", 64}, {"grid_k", 64}, {"tile", 512}});
  Status s = w->setup();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace taskring::workloads
