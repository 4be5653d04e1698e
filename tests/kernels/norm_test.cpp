// rmsnorm, softmax, rope against double references.
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
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(BuiltinRmsNorm, Golden) {
  for (DataType dt : {DataType::FP32, DataType::BF16}) {
    HostTensor x({7, 96}, dt), w({96}, DataType::FP32), o({7, 96}, dt);
    x.fill_random(1);
    w.fill_random(2, 0.5, 1.5);
    const float eps = 1e-6f;
    ASSERT_TRUE(run(id::kRmsNorm, {x.t(), w.t(), o.t()}, {f32(eps)}).ok());
    for (size_t r = 0; r < 7; ++r) {
      double ss = 0;
      for (size_t c = 0; c < 96; ++c) ss += x.at(r, c) * x.at(r, c);
      const double inv = 1.0 / std::sqrt(ss / 96 + eps);
      for (size_t c = 0; c < 96; ++c) {
        const double ref = x.at(r, c) * inv * w.get(c);
        EXPECT_NEAR(o.at(r, c), ref, (1e-5 + testing::store_rel_tol(dt)) * std::abs(ref) + 1e-6);
      }
    }
  }
}

TEST(BuiltinRmsNorm, BadWeightAndEps) {
  HostTensor x({2, 8}, DataType::FP32), w({4}, DataType::FP32), o({2, 8}, DataType::FP32), w8({8}, DataType::FP32);
  Status s = run(id::kRmsNorm, {x.t(), w.t(), o.t()}, {f32(1e-6f)});
  EXPECT_THAT(s.message(), HasSubstr("kernel 'rmsnorm'"));
  EXPECT_THAT(s.message(), HasSubstr("weight is 1x4, expected [8]"));
  EXPECT_THAT(run(id::kRmsNorm, {x.t(), w8.t(), o.t()}, {f32(-1.0f)}).message(), HasSubstr("eps"));
  EXPECT_THAT(run(id::kRmsNorm, {x.t(), w8.t(), o.t()}).message(), HasSubstr("scalars"));
}

TEST(BuiltinSoftmax, GoldenWithStridedInput) {
  HostTensor buf({12, 40}, DataType::FP32), o({12, 20}, DataType::FP32);
  buf.fill_random(3, -10, 10);
  ChipTensor x = buf.t().slice(1, 1, 40, 2);  // 12 x 20, column stride 2
  ASSERT_TRUE(run(id::kSoftmax, {x, o.t()}).ok());
  for (size_t r = 0; r < 12; ++r) {
    double m = -kInf, s = 0;
    for (size_t c = 0; c < 20; ++c) m = std::max(m, buf.at(r, 2 * c + 1));
    for (size_t c = 0; c < 20; ++c) s += std::exp(buf.at(r, 2 * c + 1) - m);
    for (size_t c = 0; c < 20; ++c) {
      const double ref = std::exp(buf.at(r, 2 * c + 1) - m) / s;
      EXPECT_NEAR(o.at(r, c), ref, 1e-5 * ref + 1e-7);
    }
  }
}

TEST(BuiltinSoftmax, SpecialValues) {
  HostTensor x({4, 3}, DataType::FP32), o({4, 3}, DataType::FP32);
  const double v[12] = {0,     -kInf,
                        0,  // masked entry -> 0
                        1,     std::nan(""),
                        2,  // NaN row -> NaN
                        -kInf, -kInf,
                        -kInf,  // all masked -> NaN (0/0)
                        kInf,  1,
                        2};  // +Inf -> NaN (Inf - Inf)
  for (int i = 0; i < 12; ++i) x.set(i, v[i]);
  ASSERT_TRUE(run(id::kSoftmax, {x.t(), o.t()}).ok());
  EXPECT_EQ(o.at(0, 0), 0.5);
  EXPECT_EQ(o.at(0, 1), 0.0);
  for (int c = 0; c < 3; ++c) EXPECT_TRUE(std::isnan(o.at(1, c)));
  for (int c = 0; c < 3; ++c) EXPECT_TRUE(std::isnan(o.at(2, c)));
  EXPECT_TRUE(std::isnan(o.at(3, 0)));
}

void rope_reference(const HostTensor& x, const HostTensor& cs, const HostTensor& sn, const std::vector<int>& pos,
                    int heads, int d, int mode, std::vector<double>* out) {
  const int half = d / 2;
  out->assign(x.numel(), 0);
  for (size_t t = 0; t < pos.size(); ++t)
    for (int h = 0; h < heads; ++h)
      for (int c = 0; c < half; ++c) {
        const int i1 = mode == 0 ? c : 2 * c, i2 = mode == 0 ? c + half : 2 * c + 1;
        const size_t base = (t * heads + h) * d;
        const double x1 = x.get(base + i1), x2 = x.get(base + i2);
        const double co = cs.at(pos[t], c), si = sn.at(pos[t], c);
        (*out)[base + i1] = x1 * co - x2 * si;
        (*out)[base + i2] = x2 * co + x1 * si;
      }
}

TEST(BuiltinRope, BothModesThreeDimsAndInPlace) {
  const int tokens = 5, heads = 3, d = 16, max_pos = 32;
  HostTensor cs({max_pos, d / 2}, DataType::FP32), sn({max_pos, d / 2}, DataType::FP32);
  for (int p = 0; p < max_pos; ++p)
    for (int c = 0; c < d / 2; ++c) {
      const double th = p * std::pow(10000.0, -2.0 * c / d);
      cs.set_at(p, c, std::cos(th));
      sn.set_at(p, c, std::sin(th));
    }
  HostTensor pos({tokens}, DataType::INT32);
  std::vector<int> pv = {0, 3, 31, 7, 7};
  for (int i = 0; i < tokens; ++i) pos.set(i, pv[i]);
  for (int mode = 0; mode < 2; ++mode) {
    HostTensor x({tokens, heads, d}, DataType::FP32), o({tokens, heads, d}, DataType::FP32);
    x.fill_random(11 + mode);
    std::vector<double> ref;
    rope_reference(x, cs, sn, pv, heads, d, mode, &ref);
    ASSERT_TRUE(run(id::kRope, {x.t(), cs.t(), sn.t(), pos.t(), o.t()}, {static_cast<uint64_t>(mode)}).ok());
    for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(o.get(i), ref[i], 1e-5) << i;
    ASSERT_TRUE(run(id::kRope, {x.t(), cs.t(), sn.t(), pos.t(), x.t()}, {static_cast<uint64_t>(mode)}).ok());
    for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(x.get(i), ref[i], 1e-5) << i;
  }
  // 2-D BF16 input, default mode.
  HostTensor x2({tokens, d}, DataType::BF16), o2({tokens, d}, DataType::BF16);
  x2.fill_random(13);
  std::vector<double> ref;
  rope_reference(x2, cs, sn, pv, 1, d, 0, &ref);
  ASSERT_TRUE(run(id::kRope, {x2.t(), cs.t(), sn.t(), pos.t(), o2.t()}).ok());
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(o2.get(i), ref[i], 1.0 / 256 * std::abs(ref[i]) + 1e-5);
}

TEST(BuiltinRope, BadInputs) {
  HostTensor x({2, 8}, DataType::FP32), cs({4, 4}, DataType::FP32), sn({4, 4}, DataType::FP32),
      pos({2}, DataType::INT32), o({2, 8}, DataType::FP32), cs3({4, 3}, DataType::FP32), posf({2}, DataType::FP32);
  pos.set(0, 1);
  pos.set(1, 4);
  Status s = run(id::kRope, {x.t(), cs.t(), sn.t(), pos.t(), o.t()});
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_THAT(s.message(), HasSubstr("positions[1] = 4"));
  EXPECT_THAT(run(id::kRope, {x.t(), cs3.t(), sn.t(), pos.t(), o.t()}).message(), HasSubstr("expected [max_pos, 4]"));
  EXPECT_THAT(run(id::kRope, {x.t(), cs.t(), sn.t(), posf.t(), o.t()}).message(), HasSubstr("positions dtype FP32"));
  EXPECT_THAT(run(id::kRope, {x.t(), cs.t(), sn.t(), pos.t(), o.t()}, {2}).message(), HasSubstr("mode 2"));
}

}  // namespace
}  // namespace taskring::kernels
