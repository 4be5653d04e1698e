// add, add_scalar, mul, copy, cast, swiglu against double references.
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
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(BuiltinAdd, VectorExampleTile) {
  HostTensor a({128, 128}, DataType::FP32), b({128, 128}, DataType::FP32), c({128, 128}, DataType::FP32);
  a.fill(2.0);
  b.fill(3.0);
  ASSERT_TRUE(run(id::kAdd, {a.t(), b.t(), c.t()}).ok());
  HostTensor d({128, 128}, DataType::FP32), e({128, 128}, DataType::FP32), g({128, 128}, DataType::FP32);
  ASSERT_TRUE(run(id::kAddScalar, {c.t(), d.t()}, {f32(1.0f)}).ok());
  ASSERT_TRUE(run(id::kAddScalar, {c.t(), e.t()}, {f32(2.0f)}).ok());
  ASSERT_TRUE(run(id::kMul, {d.t(), e.t(), g.t()}).ok());
  ASSERT_TRUE(run(id::kAdd, {g.t(), c.t(), g.t()}).ok());  // in place
  for (size_t i = 0; i < g.numel(); ++i) ASSERT_EQ(g.get(i), 47.0) << i;
}

TEST(BuiltinAdd, RandomGoldenAllTileDtypes) {
  for (DataType dt : {DataType::FP32, DataType::BF16, DataType::FP16}) {
    HostTensor a({17, 33}, dt), b({17, 33}, dt), o({17, 33}, dt), m({17, 33}, dt), s({17, 33}, dt);
    a.fill_random(1);
    b.fill_random(2);
    ASSERT_TRUE(run(id::kAdd, {a.t(), b.t(), o.t()}).ok());
    ASSERT_TRUE(run(id::kMul, {a.t(), b.t(), m.t()}).ok());
    ASSERT_TRUE(run(id::kAddScalar, {a.t(), s.t()}, {f32(0.375f)}).ok());
    const double tol = testing::store_rel_tol(dt) + 1e-7;
    for (size_t i = 0; i < a.numel(); ++i) {
      const double x = a.get(i), y = b.get(i);
      EXPECT_NEAR(o.get(i), x + y, tol * std::abs(x + y) + 1e-30) << data_type_name(dt);
      EXPECT_NEAR(m.get(i), x * y, tol * std::abs(x * y) + 1e-30);
      EXPECT_NEAR(s.get(i), x + 0.375, tol * std::abs(x + 0.375) + 1e-30);
    }
  }
}

TEST(BuiltinAdd, IntegerTilesSaturate) {
  HostTensor a({1, 3}, DataType::INT8), b({1, 3}, DataType::INT8), o({1, 3}, DataType::INT8);
  a.set(0, 100);
  a.set(1, -100);
  a.set(2, 5);
  b.set(0, 100);
  b.set(1, -100);
  b.set(2, -7);
  ASSERT_TRUE(run(id::kAdd, {a.t(), b.t(), o.t()}).ok());
  EXPECT_EQ(o.get(0), 127);
  EXPECT_EQ(o.get(1), -128);
  EXPECT_EQ(o.get(2), -2);
}

TEST(BuiltinAdd, StridedAndTransposedViews) {
  HostTensor a({8, 6}, DataType::FP32), b({6, 8}, DataType::FP32), o({10, 12}, DataType::FP32);
  a.fill_random(3);
  b.fill_random(4);
  o.fill(-99);
  // out window rows 1..8, every other column; b read transposed (column stride 8).
  ChipTensor ow = o.t().view({8, 12}, {1, 0}).slice(1, 0, 12, 2);
  ASSERT_EQ(ow.shapes[1], 6u);
  ASSERT_TRUE(run(id::kAdd, {a.t(), b.t().transpose(), ow}).ok());
  for (size_t r = 0; r < 8; ++r)
    for (size_t c = 0; c < 6; ++c) EXPECT_FLOAT_EQ(o.at(r + 1, 2 * c), a.at(r, c) + b.at(c, r));
  EXPECT_EQ(o.at(0, 0), -99);  // untouched outside the view
  EXPECT_EQ(o.at(1, 1), -99);
  EXPECT_EQ(o.at(9, 0), -99);
}

TEST(BuiltinAdd, NaNAndInfPropagate) {
  HostTensor a({1, 4}, DataType::FP32), b({1, 4}, DataType::FP32), o({1, 4}, DataType::FP32);
  const float av[4] = {kNaN, kInf, kInf, 1.0f}, bv[4] = {1.0f, 1.0f, -kInf, kNaN};
  for (int i = 0; i < 4; ++i) {
    a.set(i, av[i]);
    b.set(i, bv[i]);
  }
  ASSERT_TRUE(run(id::kAdd, {a.t(), b.t(), o.t()}).ok());
  EXPECT_TRUE(std::isnan(o.get(0)));
  EXPECT_EQ(o.get(1), kInf);
  EXPECT_TRUE(std::isnan(o.get(2)));  // Inf + -Inf
  EXPECT_TRUE(std::isnan(o.get(3)));
  ASSERT_TRUE(run(id::kMul, {a.t(), b.t(), o.t()}).ok());
  EXPECT_TRUE(std::isnan(o.get(0)));
  EXPECT_EQ(o.get(2), -kInf);
  ASSERT_TRUE(run(id::kAddScalar, {a.t(), o.t()}, {f32(kNaN)}).ok());
  EXPECT_TRUE(std::isnan(o.get(3)));
}

TEST(BuiltinAdd, BadInputsAreReported) {
  HostTensor a({4, 4}, DataType::FP32), b({4, 8}, DataType::FP32), o({4, 4}, DataType::FP32);
  Status s = run(id::kAdd, {a.t(), b.t(), o.t()});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("kernel 'add'"));
  EXPECT_THAT(s.message(), HasSubstr("b is 4x8 but a is 4x4"));
  s = run(id::kAdd, {a.t(), o.t()});
  EXPECT_THAT(s.message(), HasSubstr("expects 3 tensors, got 2"));
  s = run(id::kAddScalar, {a.t(), o.t()});
  EXPECT_THAT(s.message(), HasSubstr("expects 1..2 scalars, got 0"));
  // Upstream's example argument lists are accepted; one more scalar is not.
  EXPECT_THAT(run(id::kAddScalar, {a.t(), o.t()}, {1, 2, 3}).message(), HasSubstr("expects 1..2 scalars, got 3"));
  HostTensor bad({4, 4}, DataType::UINT16);
  s = run(id::kMul, {a.t(), bad.t(), o.t()});
  EXPECT_THAT(s.message(), HasSubstr("tensor 1 (b)"));
  EXPECT_THAT(s.message(), HasSubstr("not a tile dtype"));
  ChipTensor poisoned = a.t().view({5, 5}, {0, 0});
  s = run(id::kAdd, {poisoned, a.t(), o.t()});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("tensor 0 (a)"));
  ChipTensor null_addr = a.t();
  null_addr.buffer.addr = 0;
  s = run(id::kAdd, {a.t(), a.t(), null_addr});
  EXPECT_THAT(s.message(), HasSubstr("null buffer address"));
}

TEST(BuiltinCopy, AnyDtypeAnyStrides) {
  HostTensor src({6, 5}, DataType::INT16), dst({5, 6}, DataType::INT16);
  for (size_t i = 0; i < src.numel(); ++i) {
    int16_t v = static_cast<int16_t>(i * 7 - 50);
    std::memcpy(src.ptr(i), &v, 2);
  }
  ASSERT_TRUE(run(id::kCopy, {src.t().transpose(), dst.t()}).ok());
  for (size_t r = 0; r < 5; ++r)
    for (size_t c = 0; c < 6; ++c) {
      int16_t x, y;
      std::memcpy(&x, src.ptr(c * 5 + r), 2);
      std::memcpy(&y, dst.ptr(r * 6 + c), 2);
      EXPECT_EQ(x, y);
    }
  HostTensor f({5, 6}, DataType::FP32);
  EXPECT_THAT(run(id::kCopy, {dst.t(), f.t()}).message(), HasSubstr("use cast"));
}

TEST(BuiltinCast, RoundTripsAndRules) {
  HostTensor src({2, 4}, DataType::FP32);
  const float v[8] = {1.0f + 0x1p-8f, 3.5f, -200.0f, kNaN, kInf, 65520.0f, 2.5f, -0.0f};
  for (int i = 0; i < 8; ++i) src.set(i, v[i]);
  HostTensor bf({2, 4}, DataType::BF16), h({2, 4}, DataType::FP16), i8({2, 4}, DataType::INT8),
      i32({2, 4}, DataType::INT32);
  ASSERT_TRUE(run(id::kCast, {src.t(), bf.t()}).ok());
  ASSERT_TRUE(run(id::kCast, {src.t(), h.t()}).ok());
  ASSERT_TRUE(run(id::kCast, {src.t(), i8.t()}).ok());
  ASSERT_TRUE(run(id::kCast, {src.t(), i32.t()}).ok());
  EXPECT_EQ(bf.get(0), 1.0);
  EXPECT_TRUE(std::isnan(bf.get(3)));
  EXPECT_EQ(h.get(5), kInf);
  EXPECT_EQ(h.get(4), kInf);
  EXPECT_EQ(i8.get(1), 4);
  EXPECT_EQ(i8.get(2), -128);
  EXPECT_EQ(i8.get(3), 0);
  EXPECT_EQ(i8.get(4), 127);
  EXPECT_EQ(i8.get(6), 2);
  EXPECT_EQ(i32.get(2), -200);
  EXPECT_EQ(i32.get(4), 2147483647);
  // Through a transposed view and back.
  HostTensor back({4, 2}, DataType::FP32);
  ASSERT_TRUE(run(id::kCast, {bf.t().transpose(), back.t()}).ok());
  EXPECT_EQ(back.at(1, 0), 3.5);
  HostTensor wrong({4, 2}, DataType::FP32);
  EXPECT_THAT(run(id::kCast, {src.t(), wrong.t()}).message(), HasSubstr("kernel 'cast'"));
}

TEST(BuiltinSwiGlu, GoldenAndLimits) {
  HostTensor g({9, 16}, DataType::FP32), u({9, 16}, DataType::FP32), o({9, 16}, DataType::FP32);
  g.fill_random(5, -6, 6);
  u.fill_random(6);
  g.set(0, -kInf);
  g.set(1, kInf);
  g.set(2, kNaN);
  ASSERT_TRUE(run(id::kSwiGlu, {g.t(), u.t(), o.t()}).ok());
  for (size_t i = 3; i < g.numel(); ++i) {
    const double x = g.get(i), r = x / (1 + std::exp(-x)) * u.get(i);
    EXPECT_NEAR(o.get(i), r, 1e-5 * std::abs(r) + 1e-6);
  }
  EXPECT_EQ(o.get(0), 0.0 * u.get(0));
  EXPECT_EQ(o.get(1), u.get(1) > 0 ? kInf : -kInf);
  EXPECT_TRUE(std::isnan(o.get(2)));
  HostTensor bf({9, 16}, DataType::BF16);
  ASSERT_TRUE(run(id::kSwiGlu, {g.t(), u.t(), bf.t()}).ok());
  for (size_t i = 3; i < g.numel(); ++i) {
    const double x = g.get(i), r = x / (1 + std::exp(-x)) * u.get(i);
    EXPECT_NEAR(bf.get(i), r, (1.0 / 256 + 1e-5) * std::abs(r) + 1e-6);
  }
  HostTensor i8({9, 16}, DataType::INT8);
  EXPECT_THAT(run(id::kSwiGlu, {g.t(), i8.t(), o.t()}).message(), HasSubstr("up dtype INT8"));
}

}  // namespace
}  // namespace taskring::kernels
