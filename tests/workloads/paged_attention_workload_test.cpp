#include <gtest/gtest.h>

#include "taskring/workloads/paged_attention.hpp"
#include "workload_test_util.hpp"

namespace taskring::workloads {
namespace {

// 5 sequences, 8 query heads over 2 kv heads, contexts up to 100 tokens in
// blocks of 16 (a partial last block in most sequences): 10 tasks.
void make_small(Workload& w) {
  testing::set_params(
      w, {{"batch", 5}, {"num_heads", 8}, {"kv_heads", 2}, {"head_dim", 32}, {"block_size", 16}, {"max_context", 100}});
}

class PagedAttentionWorkloadTest : public ::testing::TestWithParam<int> {};

TEST_P(PagedAttentionWorkloadTest, MatchesHostReference) {
  auto w = make_paged_attention_workload();
  make_small(*w);
  EXPECT_EQ(w->expected_tasks(), 10u);
  testing::expect_rounds_pass(*w, GetParam());
}

TEST_P(PagedAttentionWorkloadTest, MultiHeadAndSingleTokenContexts) {
  auto w = make_paged_attention_workload();  // kv_heads == num_heads, contexts of 1..3 tokens
  testing::set_params(*w, {{"batch", 6},
                           {"num_heads", 4},
                           {"kv_heads", 4},
                           {"head_dim", 16},
                           {"block_size", 2},
                           {"max_context", 3},
                           {"seed", 9}});
  testing::expect_rounds_pass(*w, GetParam(), 1);
}

INSTANTIATE_TEST_SUITE_P(Threads, PagedAttentionWorkloadTest, ::testing::Values(1, 2));

TEST(PagedAttentionWorkload, CorruptedElementFailsTheGolden) {
  auto w = make_paged_attention_workload();
  make_small(*w);
  testing::expect_corruption_detected(*w, 77, 0.05f);
}

TEST(PagedAttentionWorkload, HeadsNotAMultipleOfKvHeadsIsRejected) {
  auto w = make_paged_attention_workload();
  ASSERT_TRUE(w->params().set("num_heads", 6).ok());
  ASSERT_TRUE(w->params().set("kv_heads", 4).ok());
  Status s = w->setup();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("num_heads 6 is not a multiple of kv_heads 4"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace taskring::workloads
