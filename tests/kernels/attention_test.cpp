// paged_attention_decode against a double-precision full softmax.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernel_test_util.hpp"

namespace taskring::kernels {
namespace {

using testing::f32;
using ::testing::HasSubstr;
using testing::HostTensor;
using testing::run;
namespace id = builtin_id;

constexpr uint32_t kBlocks = 10, kBs = 16, kKvHeads = 2, kDim = 64, kHq = 4, kMaxBlocks = 4;

// A paged cache laid out [blocks, block_size, kv_heads, dim]; one kv head is
// a strided [blocks, block_size, dim] view.
struct PagedCase {
  HostTensor k{{kBlocks, kBs, kKvHeads, kDim}, DataType::FP32};
  HostTensor v{{kBlocks, kBs, kKvHeads, kDim}, DataType::FP32};
  HostTensor q{{kHq, kDim}, DataType::FP32};
  HostTensor table{{kMaxBlocks}, DataType::INT32};
  int table_v[kMaxBlocks] = {7, 2, 9, 4};

  explicit PagedCase(DataType cache_dtype = DataType::FP32)
      : k({kBlocks, kBs, kKvHeads, kDim}, cache_dtype), v({kBlocks, kBs, kKvHeads, kDim}, cache_dtype) {
    k.fill_random(1);
    v.fill_random(2);
    q.fill_random(3);
    for (uint32_t i = 0; i < kMaxBlocks; ++i) table.set(i, table_v[i]);
  }
  ChipTensor head(const HostTensor& c, uint32_t h) const {
    const uint32_t shapes[3] = {kBlocks, kBs, kDim};
    const uint32_t strides[3] = {kBs * kKvHeads * kDim, kKvHeads * kDim, 1};
    auto t = try_make_tensor_strided(c.t().buffer.addr, c.t().buffer.size, shapes, strides, h * kDim, c.dtype());
    EXPECT_TRUE(t.ok()) << t.status().to_string();
    return *t;
  }
  double kv(const HostTensor& c, uint32_t h, int token, uint32_t d) const {
    const int b = table_v[token / kBs], s = token % kBs;
    return c.get(((static_cast<size_t>(b) * kBs + s) * kKvHeads + h) * kDim + d);
  }
  // out row r and lse for tokens [start, end).
  void reference(uint32_t h, int start, int end, double scale, std::vector<double>* out,
                 std::vector<double>* lse) const {
    out->assign(kHq * kDim, 0);
    lse->assign(kHq, -std::numeric_limits<double>::infinity());
    for (uint32_t r = 0; r < kHq; ++r) {
      std::vector<double> s;
      double m = -std::numeric_limits<double>::infinity();
      for (int t = start; t < end; ++t) {
        double dot = 0;
        for (uint32_t d = 0; d < kDim; ++d) dot += q.at(r, d) * kv(k, h, t, d);
        s.push_back(scale * dot);
        m = std::max(m, s.back());
      }
      if (s.empty()) continue;
      double l = 0;
      for (double& x : s) l += (x = std::exp(x - m));
      for (int t = start; t < end; ++t)
        for (uint32_t d = 0; d < kDim; ++d) (*out)[r * kDim + d] += s[t - start] / l * kv(v, h, t, d);
      (*lse)[r] = m + std::log(l);
    }
  }
};

TEST(BuiltinPagedAttention, GoldenAcrossBlocksAndDtypes) {
  for (DataType dt : {DataType::FP32, DataType::BF16, DataType::FP16}) {
    PagedCase pc(dt);
    HostTensor out({kHq, kDim}, DataType::FP32), lse({kHq}, DataType::FP32);
    const int ctx = 45;  // 2 full blocks + 13 of the third
    for (uint32_t h = 0; h < kKvHeads; ++h) {
      ASSERT_TRUE(run(id::kPagedAttentionDecode,
                      {pc.q.t(), pc.head(pc.k, h), pc.head(pc.v, h), pc.table.t(), out.t(), lse.t()},
                      {static_cast<uint64_t>(ctx), f32(0.0f)})
                      .ok());
      std::vector<double> ref, ref_lse;
      pc.reference(h, 0, ctx, 1.0 / std::sqrt(static_cast<double>(kDim)), &ref, &ref_lse);
      for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(out.get(i), ref[i], 2e-5) << data_type_name(dt) << " " << i;
      for (uint32_t r = 0; r < kHq; ++r) EXPECT_NEAR(lse.get(r), ref_lse[r], 2e-5);
    }
  }
}

TEST(BuiltinPagedAttention, SplitKvCombinesThroughLse) {
  PagedCase pc;
  const int ctx = 60, split = 21;  // split inside a block
  const float scale = 0.2f;
  HostTensor o1({kHq, kDim}, DataType::FP32), o2({kHq, kDim}, DataType::FP32), l1({kHq}, DataType::FP32),
      l2({kHq}, DataType::FP32);
  ChipTensor kh = pc.head(pc.k, 1), vh = pc.head(pc.v, 1);
  ASSERT_TRUE(run(id::kPagedAttentionDecode, {pc.q.t(), kh, vh, pc.table.t(), o1.t(), l1.t()},
                  {static_cast<uint64_t>(split), f32(scale), 0})
                  .ok());
  ASSERT_TRUE(run(id::kPagedAttentionDecode, {pc.q.t(), kh, vh, pc.table.t(), o2.t(), l2.t()},
                  {static_cast<uint64_t>(ctx), f32(scale), static_cast<uint64_t>(split)})
                  .ok());
  std::vector<double> ref, ref_lse;
  pc.reference(1, 0, ctx, scale, &ref, &ref_lse);
  for (uint32_t r = 0; r < kHq; ++r) {
    const double a = l1.get(r), b = l2.get(r), m = std::max(a, b);
    const double wa = std::exp(a - m), wb = std::exp(b - m);
    EXPECT_NEAR(m + std::log(wa + wb), ref_lse[r], 2e-5);
    for (uint32_t d = 0; d < kDim; ++d) {
      const double comb = (wa * o1.at(r, d) + wb * o2.at(r, d)) / (wa + wb);
      EXPECT_NEAR(comb, ref[r * kDim + d], 2e-5);
    }
  }
}

TEST(BuiltinPagedAttention, EmptyContextAndNaN) {
  PagedCase pc;
  HostTensor out({kHq, kDim}, DataType::FP32), lse({kHq}, DataType::FP32);
  out.fill(5);
  ASSERT_TRUE(run(id::kPagedAttentionDecode,
                  {pc.q.t(), pc.head(pc.k, 0), pc.head(pc.v, 0), pc.table.t(), out.t(), lse.t()}, {0})
                  .ok());
  for (size_t i = 0; i < out.numel(); ++i) EXPECT_EQ(out.get(i), 0.0);
  for (uint32_t r = 0; r < kHq; ++r) EXPECT_EQ(lse.get(r), -std::numeric_limits<double>::infinity());
  // A NaN in one cached key reaches every query row.
  pc.k.set(((static_cast<size_t>(pc.table_v[1]) * kBs + 3) * kKvHeads + 0) * kDim + 5, std::nan(""));
  ASSERT_TRUE(
      run(id::kPagedAttentionDecode, {pc.q.t(), pc.head(pc.k, 0), pc.head(pc.v, 0), pc.table.t(), out.t()}, {40}).ok());
  for (uint32_t r = 0; r < kHq; ++r) EXPECT_TRUE(std::isnan(out.at(r, 0))) << r;
  // ...but not when the poisoned token is outside the context.
  ASSERT_TRUE(
      run(id::kPagedAttentionDecode, {pc.q.t(), pc.head(pc.k, 0), pc.head(pc.v, 0), pc.table.t(), out.t()}, {16}).ok());
  for (size_t i = 0; i < out.numel(); ++i) EXPECT_FALSE(std::isnan(out.get(i)));
}

TEST(BuiltinPagedAttention, BadInputs) {
  PagedCase pc;
  HostTensor out({kHq, kDim}, DataType::FP32);
  ChipTensor kh = pc.head(pc.k, 0), vh = pc.head(pc.v, 0);
  pc.table.set(1, 10);
  Status s = run(id::kPagedAttentionDecode, {pc.q.t(), kh, vh, pc.table.t(), out.t()}, {30});
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_THAT(s.message(), HasSubstr("kernel 'paged_attention_decode'"));
  EXPECT_THAT(s.message(), HasSubstr("block_table[1] = 10 outside 0..9"));
  EXPECT_TRUE(run(id::kPagedAttentionDecode, {pc.q.t(), kh, vh, pc.table.t(), out.t()}, {16}).ok());  // block 1 unused
  pc.table.set(1, 2);
  EXPECT_THAT(run(id::kPagedAttentionDecode, {pc.q.t(), kh, vh, pc.table.t(), out.t()}, {65}).message(),
              HasSubstr("context_len 65 outside 0..64"));
  EXPECT_THAT(run(id::kPagedAttentionDecode, {pc.q.t(), kh, vh, pc.table.t(), out.t()}, {30, 0, 31}).message(),
              HasSubstr("kv_start 31"));
  HostTensor q2({kHq, 32}, DataType::FP32), out2({kHq, 32}, DataType::FP32);
  EXPECT_THAT(run(id::kPagedAttentionDecode, {q2.t(), kh, vh, pc.table.t(), out2.t()}, {30}).message(),
              HasSubstr("head_dim must be q's 32"));
  EXPECT_THAT(run(id::kPagedAttentionDecode, {pc.q.t(), pc.q.t(), vh, pc.table.t(), out.t()}, {30}).message(),
              HasSubstr("k_cache must be [num_blocks, block_size, head_dim]"));
  EXPECT_THAT(run(id::kPagedAttentionDecode, {pc.q.t(), kh, vh, pc.table.t(), out.t()}).message(),
              HasSubstr("scalars"));
}

}  // namespace
}  // namespace taskring::kernels
