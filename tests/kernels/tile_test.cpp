#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernel_test_util.hpp"

namespace taskring::tile {
namespace {

using kernels::testing::HostTensor;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(TileCast, Bf16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16_bits(1.0f + 0x1p-8f), 0x3F80);             // tie -> even (down)
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * 0x1p-8f), 0x3F82);         // tie -> even (up)
  EXPECT_EQ(float_to_bf16_bits(1.0f + 0x1p-8f + 0x1p-20f), 0x3F81);  // above tie -> up
  EXPECT_EQ(float_to_bf16_bits(kInf), 0x7F80);
  EXPECT_EQ(float_to_bf16_bits(-kInf), 0xFF80);
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7F80);  // overflow -> Inf
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(kNaN))));
  EXPECT_EQ(bf16_bits_to_float(0x3F82), 1.015625f);
}

TEST(TileCast, Fp16RoundsToNearestEven) {
  EXPECT_EQ(float_to_fp16_bits(1.0f), 0x3C00);
  EXPECT_EQ(float_to_fp16_bits(1.0f + 0x1p-11f), 0x3C00);  // tie -> even
  EXPECT_EQ(float_to_fp16_bits(1.0f + 3 * 0x1p-11f), 0x3C02);
  EXPECT_EQ(fp16_bits_to_float(float_to_fp16_bits(65504.0f)), 65504.0f);
  EXPECT_EQ(float_to_fp16_bits(65520.0f), 0x7C00);  // tie at the top -> Inf
  EXPECT_EQ(float_to_fp16_bits(-kInf), 0xFC00);
  EXPECT_TRUE(std::isnan(fp16_bits_to_float(float_to_fp16_bits(kNaN))));
}

TEST(TileCast, IntegersSaturateAndRoundHalfEven) {
  EXPECT_EQ(float_to_int8_sat(2.5f), 2);
  EXPECT_EQ(float_to_int8_sat(3.5f), 4);
  EXPECT_EQ(float_to_int8_sat(-2.5f), -2);
  EXPECT_EQ(float_to_int8_sat(127.4f), 127);
  EXPECT_EQ(float_to_int8_sat(127.5f), 127);
  EXPECT_EQ(float_to_int8_sat(-1000.0f), -128);
  EXPECT_EQ(float_to_int8_sat(kInf), 127);
  EXPECT_EQ(float_to_int8_sat(-kInf), -128);
  EXPECT_EQ(float_to_int8_sat(kNaN), 0);
  EXPECT_EQ(float_to_int32_sat(3e9f), INT32_MAX);
  EXPECT_EQ(float_to_int32_sat(-3e9f), INT32_MIN);
  EXPECT_EQ(float_to_int32_sat(-kInf), INT32_MIN);
  EXPECT_EQ(float_to_int32_sat(kNaN), 0);
  EXPECT_EQ(float_to_int32_sat(-7.5f), -8);
  EXPECT_EQ(int32_to_int8_sat(1000), 127);
  EXPECT_EQ(int32_to_int8_sat(-1000), -128);
  EXPECT_EQ(int32_to_int8_sat(-5), -5);
}

TEST(TileView, FoldsLeadingDimsAndRejectsGaps) {
  HostTensor t({2, 3, 4}, DataType::FP32);
  auto v = view_2d(t.t());
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->rows, 6);
  EXPECT_EQ(v->cols, 4);
  EXPECT_EQ(v->row_stride, 4);
  // A window in the middle dim leaves a gap between the folded rows.
  ChipTensor w = t.t().view({2, 2, 4}, {0, 1, 0});
  auto bad = view_2d(w);
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("fold"));
  HostTensor b({8}, DataType::BOOL);
  EXPECT_TRUE(view_2d(b.t()).ok());
  EXPECT_FALSE(tile_view_2d(b.t()).ok());
  ChipTensor poisoned;
  EXPECT_FALSE(view_2d(poisoned).ok());
}

TEST(TileView, LoadStoreThroughTransposedViewsAllDtypes) {
  for (DataType dt : {DataType::FP32, DataType::FP16, DataType::BF16, DataType::INT8, DataType::INT32}) {
    HostTensor src({5, 7}, dt);
    for (size_t i = 0; i < src.numel(); ++i) src.set(i, static_cast<double>(i % 23) - 11);
    Tile t;
    ASSERT_TRUE(load(src.t().transpose(), t).ok());
    ASSERT_EQ(t.rows(), 7);
    ASSERT_EQ(t.cols(), 5);
    for (int r = 0; r < 7; ++r)
      for (int c = 0; c < 5; ++c) EXPECT_EQ(t(r, c), src.at(c, r)) << data_type_name(dt);
    HostTensor dst({5, 7}, dt);
    ASSERT_TRUE(store(t, dst.t().transpose()).ok());
    for (size_t i = 0; i < src.numel(); ++i) EXPECT_EQ(dst.get(i), src.get(i));
  }
  HostTensor small({2, 2}, DataType::FP32);
  Tile t = Tile::Zero(3, 3);
  EXPECT_EQ(store(t, small.t()).code(), StatusCode::kInvalidArgument);
}

TEST(TileView, CastDescriptorsAcrossDtypes) {
  HostTensor src({2, 3}, DataType::INT32);
  const int32_t vals[6] = {1000, -1000, 5, 2147483647, -7, 0};
  for (int i = 0; i < 6; ++i) std::memcpy(src.ptr(i), &vals[i], 4);
  HostTensor i8({2, 3}, DataType::INT8);
  ASSERT_TRUE(cast(src.t(), i8.t()).ok());
  EXPECT_EQ(i8.get(0), 127);
  EXPECT_EQ(i8.get(1), -128);
  EXPECT_EQ(i8.get(2), 5);
  HostTensor i32({2, 3}, DataType::INT32);
  ASSERT_TRUE(cast(src.t(), i32.t()).ok());
  EXPECT_EQ(i32.get(3), 2147483647);  // int -> int never passes through float
  HostTensor wrong({3, 2}, DataType::FP32);
  EXPECT_EQ(cast(src.t(), wrong.t()).code(), StatusCode::kInvalidArgument);
}

TEST(TileOps, BinaryMatchesDoubleAndPropagatesNaN) {
  Tile a(1, 6), b(1, 6), o;
  a << 1.5f, -2.0f, kNaN, kInf, 0.0f, 3.0f;
  b << 0.25f, 4.0f, 1.0f, 1.0f, 0.0f, kNaN;
  binary(BinaryOp::kAdd, a, b, o = Tile(1, 6));
  EXPECT_EQ(o(0, 0), 1.75f);
  EXPECT_TRUE(std::isnan(o(0, 2)));
  EXPECT_EQ(o(0, 3), kInf);
  EXPECT_TRUE(std::isnan(o(0, 5)));
  binary(BinaryOp::kDiv, a, b, o);
  EXPECT_EQ(o(0, 1), -0.5f);
  EXPECT_TRUE(std::isnan(o(0, 4)));  // 0/0
  binary(BinaryOp::kSub, a, b, o);
  EXPECT_EQ(o(0, 1), -6.0f);
  binary(BinaryOp::kMul, a, b, o);
  EXPECT_EQ(o(0, 1), -8.0f);
  binary(BinaryOp::kMax, a, b, o);
  EXPECT_EQ(o(0, 0), 1.5f);
  EXPECT_EQ(o(0, 1), 4.0f);
  EXPECT_TRUE(std::isnan(o(0, 2)));  // NaN on the left
  EXPECT_TRUE(std::isnan(o(0, 5)));  // NaN on the right
  binary(BinaryOp::kMin, a, b, o);
  EXPECT_EQ(o(0, 1), -2.0f);
  EXPECT_TRUE(std::isnan(o(0, 2)));
  EXPECT_TRUE(std::isnan(o(0, 5)));
  binary(BinaryOp::kMax, a, 2.0f, o);
  EXPECT_EQ(o(0, 0), 2.0f);
  EXPECT_TRUE(std::isnan(o(0, 2)));
  binary(BinaryOp::kMin, a, 2.0f, o);
  EXPECT_EQ(o(0, 5), 2.0f);
  binary(BinaryOp::kSub, a, 1.0f, o);
  EXPECT_EQ(o(0, 0), 0.5f);
  binary(BinaryOp::kDiv, a, 0.0f, o);
  EXPECT_EQ(o(0, 0), kInf);
}

TEST(TileOps, UnaryGoldenAndSpecialValues) {
  const float xs[] = {-3.0f, -0.5f, 0.0f, 0.75f, 2.0f, 9.0f};
  Tile a(1, 6), o(1, 6);
  for (int i = 0; i < 6; ++i) a(0, i) = xs[i];
  auto check = [&](UnaryOp op, double (*ref)(double)) {
    unary(op, a, o);
    for (int i = 0; i < 6; ++i) {
      const double r = ref(xs[i]);
      if (std::isnan(r))
        EXPECT_TRUE(std::isnan(o(0, i))) << static_cast<int>(op) << " x=" << xs[i];
      else if (std::isinf(r))
        EXPECT_EQ(o(0, i), r) << static_cast<int>(op) << " x=" << xs[i];
      else
        EXPECT_NEAR(o(0, i), r, 1e-5 * std::abs(r) + 1e-6) << static_cast<int>(op) << " x=" << xs[i];
    }
  };
  check(UnaryOp::kExp, [](double x) { return std::exp(x); });
  check(UnaryOp::kLog, [](double x) { return x < 0 ? NAN : std::log(x); });
  check(UnaryOp::kSqrt, [](double x) { return x < 0 ? NAN : std::sqrt(x); });
  check(UnaryOp::kNeg, [](double x) { return -x; });
  check(UnaryOp::kAbs, [](double x) { return std::abs(x); });
  check(UnaryOp::kRelu, [](double x) { return x > 0 ? x : 0.0; });
  check(UnaryOp::kSigmoid, [](double x) { return 1 / (1 + std::exp(-x)); });
  check(UnaryOp::kSilu, [](double x) { return x / (1 + std::exp(-x)); });
  check(UnaryOp::kGelu, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); });
  Tile pos(1, 3), po(1, 3);
  pos << 0.25f, 4.0f, 100.0f;
  unary(UnaryOp::kRsqrt, pos, po);
  EXPECT_NEAR(po(0, 0), 2.0, 1e-6);
  EXPECT_NEAR(po(0, 1), 0.5, 1e-6);
  EXPECT_NEAR(po(0, 2), 0.1, 1e-6);

  Tile s(1, 5), so(1, 5);
  s << kInf, -kInf, kNaN, 0.0f, -0.0f;
  unary(UnaryOp::kExp, s, so);
  EXPECT_EQ(so(0, 0), kInf);
  EXPECT_EQ(so(0, 1), 0.0f);
  EXPECT_TRUE(std::isnan(so(0, 2)));
  Tile deep(1, 3), deep_o(1, 3);
  deep << -100.0f, -90.0f, -200.0f;
  unary(UnaryOp::kExp, deep, deep_o);  // gradual underflow, not Eigen's clamp
  EXPECT_NEAR(deep_o(0, 0), std::exp(-100.0), 1e-45);
  EXPECT_NEAR(deep_o(0, 1), std::exp(-90.0), 1e-3 * std::exp(-90.0));
  EXPECT_EQ(deep_o(0, 2), 0.0f);
  unary(UnaryOp::kLog, s, so);
  EXPECT_EQ(so(0, 0), kInf);
  EXPECT_EQ(so(0, 3), -kInf);
  unary(UnaryOp::kRsqrt, s, so);
  EXPECT_EQ(so(0, 3), kInf);
  unary(UnaryOp::kRelu, s, so);
  EXPECT_EQ(so(0, 0), kInf);
  EXPECT_EQ(so(0, 1), 0.0f);
  EXPECT_TRUE(std::isnan(so(0, 2)));  // relu(NaN) = NaN
  unary(UnaryOp::kSigmoid, s, so);
  EXPECT_EQ(so(0, 0), 1.0f);
  EXPECT_EQ(so(0, 1), 0.0f);
  EXPECT_TRUE(std::isnan(so(0, 2)));
  unary(UnaryOp::kSilu, s, so);
  EXPECT_EQ(so(0, 0), kInf);
  EXPECT_EQ(so(0, 1), 0.0f);
  EXPECT_TRUE(std::isnan(so(0, 2)));
  unary(UnaryOp::kGelu, s, so);
  EXPECT_EQ(so(0, 0), kInf);
  EXPECT_EQ(so(0, 1), 0.0f);
  EXPECT_TRUE(std::isnan(so(0, 2)));
}

TEST(TileOps, RowReductionsAndBroadcasts) {
  Tile a(3, 4);
  a << 1, 2, 3, 4,   //
      -1, -5, 2, 0,  //
      1, kNaN, 0, 0;
  ColVec sums, maxes;
  row_sum(a, sums);
  row_max(a, maxes);
  EXPECT_EQ(sums(0), 10.0f);
  EXPECT_EQ(sums(1), -4.0f);
  EXPECT_TRUE(std::isnan(sums(2)));
  EXPECT_EQ(maxes(0), 4.0f);
  EXPECT_EQ(maxes(1), 2.0f);
  EXPECT_TRUE(std::isnan(maxes(2)));
  Tile o(3, 4);
  ColVec per_row(3);
  per_row << 1, 2, 3;
  broadcast_rows(BinaryOp::kMul, a, per_row, o);
  EXPECT_EQ(o(1, 1), -10.0f);
  EXPECT_EQ(o(2, 0), 3.0f);
  RowVec per_col(4);
  per_col << 10, 20, 30, 40;
  broadcast_cols(BinaryOp::kAdd, a, per_col, o);
  EXPECT_EQ(o(0, 3), 44.0f);
  EXPECT_EQ(o(1, 1), 15.0f);
}

TEST(TileMatmul, TileFormWithTransposesAndAccumulate) {
  Tile a = Tile::Random(5, 3), b = Tile::Random(4, 3), c;
  matmul(a, b, c, {.trans_b = true});
  ASSERT_EQ(c.rows(), 5);
  ASSERT_EQ(c.cols(), 4);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j) {
      double r = 0;
      for (int k = 0; k < 3; ++k) r += static_cast<double>(a(i, k)) * b(j, k);
      EXPECT_NEAR(c(i, j), r, 1e-5);
    }
  Tile c2 = c;
  matmul(a, b, c2, {.accumulate = true, .trans_b = true});
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(c2(i, j), 2 * c(i, j), 1e-5);
}

}  // namespace
}  // namespace taskring::tile
