// topk_gating, gather_rows, scatter_add_rows against double references.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernel_test_util.hpp"

namespace taskring::kernels {
namespace {

using ::testing::HasSubstr;
using testing::HostTensor;
using testing::run;
namespace id = builtin_id;

TEST(BuiltinTopkGating, TopKMatchesReference) {
  const int tokens = 13, experts = 16, k = 4;
  HostTensor lg({tokens, experts}, DataType::FP32), ids({tokens, k}, DataType::INT32), w({tokens, k}, DataType::FP32);
  lg.fill_random(1, -3, 3);
  lg.set_at(0, 5, 10.0);
  lg.set_at(0, 9, 10.0);  // tie: the lower id comes first
  ASSERT_TRUE(run(id::kTopkGating, {lg.t(), ids.t(), w.t()}).ok());
  for (int t = 0; t < tokens; ++t) {
    std::vector<int> order(experts);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return lg.at(t, a) > lg.at(t, b); });
    double m = lg.at(t, order[0]), s = 0;
    for (int j = 0; j < k; ++j) s += std::exp(lg.at(t, order[j]) - m);
    double wsum = 0;
    for (int j = 0; j < k; ++j) {
      EXPECT_EQ(ids.at(t, j), order[j]) << "token " << t;
      EXPECT_NEAR(w.at(t, j), std::exp(lg.at(t, order[j]) - m) / s, 1e-6);
      wsum += w.at(t, j);
    }
    EXPECT_NEAR(wsum, 1.0, 1e-6);
  }
  EXPECT_EQ(ids.at(0, 0), 5);
  EXPECT_EQ(ids.at(0, 1), 9);
}

TEST(BuiltinTopkGating, NaNRanksLowest) {
  HostTensor lg({1, 4}, DataType::FP32), ids({1, 2}, DataType::INT32), w({1, 2}, DataType::FP32);
  lg.set(0, std::nan(""));
  lg.set(1, -1);
  lg.set(2, 3);
  lg.set(3, std::nan(""));
  ASSERT_TRUE(run(id::kTopkGating, {lg.t(), ids.t(), w.t()}).ok());
  EXPECT_EQ(ids.at(0, 0), 2);
  EXPECT_EQ(ids.at(0, 1), 1);
  HostTensor ids3({1, 3}, DataType::INT32), w3({1, 3}, DataType::FP32);
  ASSERT_TRUE(run(id::kTopkGating, {lg.t(), ids3.t(), w3.t()}).ok());
  EXPECT_EQ(ids3.at(0, 2), 0);           // first NaN after the numbers
  EXPECT_TRUE(std::isnan(w3.at(0, 0)));  // a NaN among the chosen poisons the row
}

TEST(BuiltinTopkGating, BalancedModeIsRoundRobinAndEven) {
  const int tokens = 10, experts = 8, k = 2;
  const uint64_t base = 3;
  HostTensor lg({tokens, experts}, DataType::BF16), ids({tokens, k}, DataType::INT32), w({tokens, k}, DataType::FP32);
  lg.fill_random(2);
  ASSERT_TRUE(run(id::kTopkGating, {lg.t(), ids.t(), w.t()}, {1, base}).ok());
  std::vector<int> load(experts, 0);
  for (int t = 0; t < tokens; ++t) {
    const double a = lg.at(t, ids.at(t, 0)), b = lg.at(t, ids.at(t, 1)), m = std::max(a, b);
    for (int j = 0; j < k; ++j) {
      EXPECT_EQ(ids.at(t, j), static_cast<int>(((base + t) * k + j) % experts));
      ++load[static_cast<int>(ids.at(t, j))];
    }
    EXPECT_NEAR(w.at(t, 0), std::exp(a - m) / (std::exp(a - m) + std::exp(b - m)), 1e-6);
  }
  const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
  EXPECT_LE(*hi - *lo, 1);
}

TEST(BuiltinTopkGating, BadInputs) {
  HostTensor lg({4, 3}, DataType::FP32), ids({4, 5}, DataType::INT32), w({4, 5}, DataType::FP32),
      idsf({4, 2}, DataType::FP32), w2({4, 2}, DataType::FP32), ids2({4, 2}, DataType::INT32),
      ids3({3, 2}, DataType::INT32), w32({3, 2}, DataType::FP32);
  EXPECT_THAT(run(id::kTopkGating, {lg.t(), ids.t(), w.t()}).message(), HasSubstr("k = 5 must be in 1..3"));
  EXPECT_THAT(run(id::kTopkGating, {lg.t(), idsf.t(), w2.t()}).message(), HasSubstr("topk_ids dtype FP32"));
  EXPECT_THAT(run(id::kTopkGating, {lg.t(), ids3.t(), w32.t()}).message(), HasSubstr("3 rows for 4 tokens"));
  EXPECT_THAT(run(id::kTopkGating, {lg.t(), ids2.t(), w2.t()}, {5}).message(), HasSubstr("mode 5"));
}

TEST(BuiltinGatherRows, GatherAnyDtypeAndStrides) {
  HostTensor src({6, 4}, DataType::BF16), idx({5}, DataType::INT32), out({5, 4}, DataType::BF16);
  src.fill_random(3);
  const int iv[5] = {5, 0, 0, 3, 2};
  for (int i = 0; i < 5; ++i) idx.set(i, iv[i]);
  ASSERT_TRUE(run(id::kGatherRows, {src.t(), idx.t(), out.t()}).ok());
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_EQ(out.at(r, c), src.at(iv[r], c));
  // Transposed source: rows of src^T are columns of the buffer.
  HostTensor out2({5, 6}, DataType::BF16);
  HostTensor idx2({5, 1}, DataType::INT32);
  const int iv2[5] = {1, 3, 0, 2, 2};
  for (int i = 0; i < 5; ++i) idx2.set(i, iv2[i]);
  ASSERT_TRUE(run(id::kGatherRows, {src.t().transpose(), idx2.t(), out2.t()}).ok());
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 6; ++c) EXPECT_EQ(out2.at(r, c), src.at(c, iv2[r]));
}

TEST(BuiltinGatherRows, OutOfRangeIndexWritesNothing) {
  HostTensor src({3, 2}, DataType::FP32), idx({2}, DataType::INT32), out({2, 2}, DataType::FP32);
  out.fill(-1);
  idx.set(0, 1);
  idx.set(1, 3);
  Status s = run(id::kGatherRows, {src.t(), idx.t(), out.t()});
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_THAT(s.message(), HasSubstr("kernel 'gather_rows'"));
  EXPECT_THAT(s.message(), HasSubstr("indices[1] = 3 outside 0..2"));
  for (size_t i = 0; i < out.numel(); ++i) EXPECT_EQ(out.get(i), -1);
  idx.set(1, -1);
  EXPECT_EQ(run(id::kGatherRows, {src.t(), idx.t(), out.t()}).code(), StatusCode::kOutOfRange);
  HostTensor outh({2, 2}, DataType::FP16), out3({2, 3}, DataType::FP32);
  idx.set(1, 0);
  EXPECT_THAT(run(id::kGatherRows, {src.t(), idx.t(), outh.t()}).message(), HasSubstr("differs from src dtype"));
  EXPECT_THAT(run(id::kGatherRows, {src.t(), idx.t(), out3.t()}).message(), HasSubstr("expected 2x2"));
}

TEST(BuiltinScatterAddRows, WeightedCombineWithDuplicates) {
  const int rows = 7, tokens = 4, d = 5;
  HostTensor src({rows, d}, DataType::BF16), idx({rows}, DataType::INT32), w({rows}, DataType::FP32),
      dst({tokens, d}, DataType::FP32);
  src.fill_random(4);
  w.fill_random(5, 0, 1);
  dst.fill_random(6);
  const int iv[rows] = {0, 3, 3, 1, 0, 2, 3};
  for (int i = 0; i < rows; ++i) idx.set(i, iv[i]);
  std::vector<double> ref(dst.numel());
  for (size_t i = 0; i < ref.size(); ++i) ref[i] = dst.get(i);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < d; ++c) ref[iv[r] * d + c] += w.get(r) * src.at(r, c);
  ASSERT_TRUE(run(id::kScatterAddRows, {src.t(), idx.t(), dst.t(), w.t()}).ok());
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(dst.get(i), ref[i], 1e-5);
  // Unweighted form.
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < d; ++c) ref[iv[r] * d + c] += src.at(r, c);
  ASSERT_TRUE(run(id::kScatterAddRows, {src.t(), idx.t(), dst.t()}).ok());
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(dst.get(i), ref[i], 1e-5);
}

TEST(BuiltinScatterAddRows, BadInputs) {
  HostTensor src({3, 2}, DataType::FP32), idx({3}, DataType::INT32), dst({2, 2}, DataType::FP32),
      dbf({2, 2}, DataType::BF16), w2({2}, DataType::FP32), idx2({2}, DataType::INT32);
  idx.set(2, 2);
  Status s = run(id::kScatterAddRows, {src.t(), idx.t(), dst.t()});
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_THAT(s.message(), HasSubstr("indices[2] = 2 outside 0..1"));
  idx.set(2, 0);
  EXPECT_THAT(run(id::kScatterAddRows, {src.t(), idx.t(), dbf.t()}).message(),
              HasSubstr("dst dtype BF16, expected FP32"));
  EXPECT_THAT(run(id::kScatterAddRows, {src.t(), idx.t(), dst.t(), w2.t()}).message(),
              HasSubstr("expected a vector of 3"));
  EXPECT_THAT(run(id::kScatterAddRows, {src.t(), idx2.t(), dst.t()}).message(), HasSubstr("one index per src row"));
}

}  // namespace
}  // namespace taskring::kernels
