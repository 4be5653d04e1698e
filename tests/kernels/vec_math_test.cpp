// vec_math: every instruction-set level this machine supports against a
// double-precision scalar reference, with the bounds of vec_math.hpp, on a
// dense sweep, the special values, every tail length and in place.
#include "taskring/kernels/vec_math.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace taskring::vec {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<const Kernels*> levels() {
  std::vector<const Kernels*> out;
  for (Level l : {Level::kPortable, Level::kAvx2, Level::kAvx512})
    if (const Kernels* k = for_level(l)) out.push_back(k);
  return out;
}

double ref_gelu(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
double ref_sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// |got − want| ≤ rel·|want| + abs, NaN ↔ NaN, ±Inf exact.
void expect_close(float got, double want, double rel, double abs, const std::string& what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << " got " << got;
  } else if (std::isinf(static_cast<float>(want))) {  // beyond FLT_MAX: overflow to ±Inf
    EXPECT_EQ(got, static_cast<float>(want)) << what;
  } else {
    EXPECT_LE(std::abs(got - want), rel * std::abs(want) + abs) << what << " got " << got << " want " << want;
  }
}

// The sweep: dense over [-110, 95] (both under- and overflow of exp), plus
// the values that must hold exactly.
std::vector<float> sweep() {
  std::vector<float> xs;
  for (float x = -110.0f; x <= 95.0f; x += 0.0137f) xs.push_back(x);
  std::mt19937 g(7);
  std::uniform_real_distribution<float> d(-6.0f, 6.0f);
  for (int i = 0; i < 4000; ++i) xs.push_back(d(g));
  for (float s : {0.0f, -0.0f, kInf, -kInf, kNaN, 88.72f, 88.7228f, 88.73f, -87.0f, -100.0f, -103.9f, -104.0f, 1e-30f,
                  -1e-30f, 1e-40f})
    xs.push_back(s);
  return xs;
}

TEST(VecMath, LevelsIncludeThePortableOneAndActiveIsSupported) {
  const auto ls = levels();
  ASSERT_FALSE(ls.empty());
  EXPECT_EQ(ls.front()->level, Level::kPortable);
  EXPECT_NE(for_level(active().level), nullptr);
  EXPECT_EQ(level_name(Level::kAvx512), "avx512");
}

TEST(VecMath, UnaryFunctionsMatchTheDoubleReference) {
  const std::vector<float> xs = sweep();
  std::vector<float> y(xs.size());
  for (const Kernels* k : levels()) {
    const std::string lv(level_name(k->level));
    k->exp(xs.data(), y.data(), xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      const double w = std::exp(static_cast<double>(xs[i]));
      // Below FLT_MIN the result is a subnormal: one rounding of the exact value.
      expect_close(y[i], w, 2e-7, w < 1.2e-38 ? 0.75e-45 : 0.0, lv + " exp x=" + std::to_string(xs[i]));
    }
    k->sigmoid(xs.data(), y.data(), xs.size());
    for (size_t i = 0; i < xs.size(); ++i)
      expect_close(y[i], ref_sigmoid(xs[i]), 3e-7, 1.2e-38, lv + " sigmoid x=" + std::to_string(xs[i]));
    k->silu(xs.data(), y.data(), xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      const double x = xs[i];
      const double w = x == -kInf ? 0.0 : x * ref_sigmoid(x);
      expect_close(y[i], w, 3e-7, 1.2e-36, lv + " silu x=" + std::to_string(xs[i]));
    }
    k->gelu(xs.data(), y.data(), xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      const double x = xs[i];
      const double w = x == -kInf ? 0.0 : x == kInf ? kInf : ref_gelu(x);
      expect_close(y[i], w, 3e-7, std::isfinite(x) ? 1e-7 * std::abs(x) : 0.0, lv + " gelu x=" + std::to_string(x));
    }
    k->rsqrt(xs.data(), y.data(), xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      const double x = xs[i];
      const double w = x == 0 ? std::copysign(kInf, x) : x < 0 ? NAN : 1.0 / std::sqrt(x);  // 1/sqrt(-0) = -Inf
      expect_close(y[i], w, 1.2e-7, 0.0, lv + " rsqrt x=" + std::to_string(xs[i]));
    }
  }
}

TEST(VecMath, SpecialValuesAreExact) {
  const float xs[] = {kInf, -kInf, kNaN, 0.0f, -200.0f};
  float y[5];
  for (const Kernels* k : levels()) {
    const std::string lv(level_name(k->level));
    k->exp(xs, y, 5);
    EXPECT_EQ(y[0], kInf) << lv;
    EXPECT_EQ(y[1], 0.0f) << lv;
    EXPECT_TRUE(std::isnan(y[2])) << lv;
    EXPECT_EQ(y[3], 1.0f) << lv;
    EXPECT_EQ(y[4], 0.0f) << lv;
    k->sigmoid(xs, y, 5);
    EXPECT_EQ(y[0], 1.0f) << lv;
    EXPECT_EQ(y[1], 0.0f) << lv;
    EXPECT_TRUE(std::isnan(y[2])) << lv;
    EXPECT_EQ(y[3], 0.5f) << lv;
    k->silu(xs, y, 5);
    EXPECT_EQ(y[0], kInf) << lv;
    EXPECT_EQ(y[1], 0.0f) << lv;
    EXPECT_TRUE(std::isnan(y[2])) << lv;
    EXPECT_EQ(y[3], 0.0f) << lv;
    k->gelu(xs, y, 5);
    EXPECT_EQ(y[0], kInf) << lv;
    EXPECT_EQ(y[1], 0.0f) << lv;
    EXPECT_TRUE(std::isnan(y[2])) << lv;
    EXPECT_EQ(y[3], 0.0f) << lv;
    k->rsqrt(xs, y, 5);
    EXPECT_EQ(y[0], 0.0f) << lv;
    EXPECT_TRUE(std::isnan(y[1])) << lv;
    EXPECT_TRUE(std::isnan(y[2])) << lv;
    EXPECT_EQ(y[3], kInf) << lv;
  }
}

// Every length 0..70 (all tails of every width), in place and out of place,
// with a guard after the end that must stay untouched.
TEST(VecMath, EveryLengthInPlaceAndGuarded) {
  for (const Kernels* k : levels()) {
    const std::string lv(level_name(k->level));
    for (size_t n = 0; n <= 70; ++n) {
      std::vector<float> x(n + 1), y(n + 1, 123.0f), w(n + 1), c(n + 1), s(n + 1);
      for (size_t i = 0; i < n; ++i) {
        x[i] = std::sin(0.37f * i) * 4.0f;
        w[i] = 0.5f + 0.01f * i;
        c[i] = std::cos(0.1f * i);
        s[i] = std::sin(0.1f * i);
      }
      x[n] = 7.0f;
      k->exp(x.data(), y.data(), n);
      for (size_t i = 0; i < n; ++i)
        expect_close(y[i], std::exp(double{x[i]}), 2e-7, 0, lv + " exp n=" + std::to_string(n));
      EXPECT_EQ(y[n], 123.0f) << lv << " exp wrote past n=" << n;
      std::vector<float> z = x;
      k->silu(z.data(), z.data(), n);
      for (size_t i = 0; i < n; ++i) expect_close(z[i], x[i] * ref_sigmoid(x[i]), 3e-7, 1e-44, lv + " silu in place");
      EXPECT_EQ(z[n], 7.0f) << lv;

      double want_max = -INFINITY, want_sum = 0, want_sq = 0;
      for (size_t i = 0; i < n; ++i) {
        want_max = std::max(want_max, double{x[i]});
        want_sq += double{x[i]} * x[i];
      }
      EXPECT_EQ(k->max(x.data(), n), static_cast<float>(want_max)) << lv << " n=" << n;
      const float m = n ? static_cast<float>(want_max) : 0.0f;
      std::fill(y.begin(), y.end(), 123.0f);
      const float sum = k->exp_shift_sum(x.data(), m, y.data(), n);
      for (size_t i = 0; i < n; ++i) {
        const double e = std::exp(double{x[i] - m});  // the kernel sees x − m rounded to float
        want_sum += e;
        expect_close(y[i], e, 2e-7, 0, lv + " exp_shift_sum");
      }
      EXPECT_EQ(y[n], 123.0f) << lv;
      expect_close(sum, want_sum, 1e-6, 0, lv + " exp_shift_sum sum n=" + std::to_string(n));
      expect_close(k->sum_squares(x.data(), n), want_sq, 1e-6, 0, lv + " sum_squares n=" + std::to_string(n));

      k->scale(x.data(), 0.5f, y.data(), n);
      for (size_t i = 0; i < n; ++i) EXPECT_EQ(y[i], x[i] * 0.5f) << lv;
      k->scale_mul(x.data(), 0.25f, w.data(), y.data(), n);
      for (size_t i = 0; i < n; ++i) EXPECT_EQ(y[i], (x[i] * 0.25f) * w[i]) << lv;
      k->swiglu(x.data(), w.data(), y.data(), n);
      for (size_t i = 0; i < n; ++i)
        expect_close(y[i], x[i] * ref_sigmoid(x[i]) * w[i], 4e-7, 1e-44, lv + " swiglu n=" + std::to_string(n));
      EXPECT_EQ(y[n], 123.0f) << lv;
      std::vector<float> a = x, b = w;
      k->rotate(a.data(), b.data(), c.data(), s.data(), a.data(), b.data(), n);  // in place
      for (size_t i = 0; i < n; ++i) {
        const double ra = double{x[i]} * c[i] - double{w[i]} * s[i];
        const double rb = double{w[i]} * c[i] + double{x[i]} * s[i];
        expect_close(a[i], ra, 2e-7, 2e-7 * (std::abs(x[i]) + std::abs(w[i])), lv + " rotate a");
        expect_close(b[i], rb, 2e-7, 2e-7 * (std::abs(x[i]) + std::abs(w[i])), lv + " rotate b");
      }
    }
  }
}

TEST(VecMath, MaxPropagatesNaNFromAnyPosition) {
  for (const Kernels* k : levels()) {
    EXPECT_EQ(k->max(nullptr, 0), -kInf);
    for (size_t n : {1u, 5u, 16u, 33u}) {
      for (size_t at = 0; at < n; ++at) {
        std::vector<float> x(n, 1.0f);
        x[at] = kNaN;
        EXPECT_TRUE(std::isnan(k->max(x.data(), n))) << level_name(k->level) << " n=" << n << " at=" << at;
        x[at] = 2.0f;
        EXPECT_EQ(k->max(x.data(), n), 2.0f);
      }
    }
  }
}

}  // namespace
}  // namespace taskring::vec
