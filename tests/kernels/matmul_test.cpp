// matmul tile against a double reference.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernel_test_util.hpp"

namespace taskring::kernels {
namespace {

using ::testing::HasSubstr;
using testing::HostTensor;
using testing::run;
namespace id = builtin_id;

double elem(const ChipTensor& t, uint32_t r, uint32_t c) {
  const uint32_t co[2] = {r, c};
  const char* base = reinterpret_cast<const char*>(t.buffer.addr);
  return tile::read_as_float(base + t.element_offset(co) * t.elem_size(), t.dtype);
}

// Checks C (M x N) against op(A)·op(B) (+ C0) computed in double; the
// tolerance is FP32 accumulation over K terms plus C's storage rounding.
void expect_matmul(const ChipTensor& a, const ChipTensor& b, const HostTensor& c, bool ta, bool tb,
                   const std::vector<double>* c0 = nullptr) {
  const uint32_t m = ta ? a.shapes[1] : a.shapes[0], k = ta ? a.shapes[0] : a.shapes[1];
  const uint32_t n = tb ? b.shapes[0] : b.shapes[1];
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t j = 0; j < n; ++j) {
      double r = c0 ? (*c0)[i * n + j] : 0.0, mag = std::abs(r);
      for (uint32_t p = 0; p < k; ++p) {
        const double x = ta ? elem(a, p, i) : elem(a, i, p), y = tb ? elem(b, j, p) : elem(b, p, j);
        r += x * y;
        mag += std::abs(x * y);
      }
      const double tol =
          1e-6 * mag * std::sqrt(static_cast<double>(k) + 1) + testing::store_rel_tol(c.dtype()) * std::abs(r) + 1e-6;
      ASSERT_NEAR(c.at(i, j), r, tol) << "i=" << i << " j=" << j;
    }
}

TEST(BuiltinMatmul, Fp32AllTransposeFlags) {
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      const uint32_t m = 17, k = 33, n = 9;
      HostTensor a(ta ? std::vector<uint32_t>{k, m} : std::vector<uint32_t>{m, k}, DataType::FP32);
      HostTensor b(tb ? std::vector<uint32_t>{n, k} : std::vector<uint32_t>{k, n}, DataType::FP32);
      HostTensor c({m, n}, DataType::FP32);
      a.fill_random(10 + ta);
      b.fill_random(20 + tb);
      ASSERT_TRUE(
          run(id::kMatmul, {a.t(), b.t(), c.t()}, {0, static_cast<uint64_t>(ta), static_cast<uint64_t>(tb)}).ok());
      expect_matmul(a.t(), b.t(), c, ta, tb);
    }
}

TEST(BuiltinMatmul, AccumulateAndDefaultScalars) {
  HostTensor a({64, 64}, DataType::FP32), b({64, 64}, DataType::FP32), c({64, 64}, DataType::FP32);
  a.fill_random(1);
  b.fill_random(2);
  c.fill_random(3);
  std::vector<double> c0(c.numel());
  for (size_t i = 0; i < c.numel(); ++i) c0[i] = c.get(i);
  ASSERT_TRUE(run(id::kMatmul, {a.t(), b.t(), c.t()}, {1}).ok());
  expect_matmul(a.t(), b.t(), c, false, false, &c0);
  ASSERT_TRUE(run(id::kMatmul, {a.t(), b.t(), c.t()}).ok());  // no scalars: C = A·B
  expect_matmul(a.t(), b.t(), c, false, false);
}

TEST(BuiltinMatmul, TransposedAndSteppedViews) {
  // A as a transposed view (column-major), B with column step 2 (packed),
  // C a window of a bigger buffer.
  HostTensor abuf({20, 12}, DataType::FP32), bbuf({20, 14}, DataType::FP32), cbuf({16, 10}, DataType::FP32);
  abuf.fill_random(4);
  bbuf.fill_random(5);
  cbuf.fill(7);
  ChipTensor a = abuf.t().transpose();         // 12 x 20
  ChipTensor b = bbuf.t().slice(1, 0, 14, 2);  // 20 x 7, column stride 2
  ChipTensor c = cbuf.t().view({12, 7}, {2, 1});
  ASSERT_TRUE(run(id::kMatmul, {a, b, c}).ok());
  for (uint32_t i = 0; i < 12; ++i)
    for (uint32_t j = 0; j < 7; ++j) {
      double r = 0;
      for (uint32_t p = 0; p < 20; ++p) r += elem(a, i, p) * elem(b, p, j);
      EXPECT_NEAR(cbuf.at(i + 2, j + 1), r, 1e-4);
    }
  EXPECT_EQ(cbuf.at(0, 0), 7);
  EXPECT_EQ(cbuf.at(2, 0), 7);
  EXPECT_EQ(cbuf.at(2, 8), 7);
}

TEST(BuiltinMatmul, HalfPrecisionInputsAccumulateInFp32) {
  for (DataType in : {DataType::BF16, DataType::FP16}) {
    for (DataType out : {DataType::FP32, DataType::BF16}) {
      HostTensor a({32, 128}, in), b({128, 48}, in), c({32, 48}, out);
      a.fill_random(6);
      b.fill_random(7);
      ASSERT_TRUE(run(id::kMatmul, {a.t(), b.t(), c.t()}).ok()) << data_type_name(in);
      expect_matmul(a.t(), b.t(), c, false, false);
    }
  }
  // Mixed: BF16 A, FP32 B^T, accumulate into FP16 C.
  HostTensor a({8, 16}, DataType::BF16), b({12, 16}, DataType::FP32), c({8, 12}, DataType::FP16);
  a.fill_random(8);
  b.fill_random(9);
  c.fill_random(10);
  std::vector<double> c0(c.numel());
  for (size_t i = 0; i < c.numel(); ++i) c0[i] = c.get(i);
  ASSERT_TRUE(run(id::kMatmul, {a.t(), b.t(), c.t()}, {1, 0, 1}).ok());
  expect_matmul(a.t(), b.t(), c, false, true, &c0);
}

TEST(BuiltinMatmul, NaNAndInfPropagate) {
  HostTensor a({2, 2}, DataType::FP32), b({2, 2}, DataType::FP32), c({2, 2}, DataType::FP32);
  a.set(0, std::nan(""));
  a.set(1, 1);
  a.set(2, 1);
  a.set(3, 1);
  b.set(0, 1);
  b.set(1, 1);
  b.set(2, std::numeric_limits<double>::infinity());
  b.set(3, 1);
  ASSERT_TRUE(run(id::kMatmul, {a.t(), b.t(), c.t()}).ok());
  EXPECT_TRUE(std::isnan(c.at(0, 0)));
  EXPECT_TRUE(std::isnan(c.at(0, 1)));
  EXPECT_EQ(c.at(1, 0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(c.at(1, 1), 2.0);
}

TEST(BuiltinMatmul, BadShapesAndDtypes) {
  HostTensor a({4, 5}, DataType::FP32), b({6, 3}, DataType::FP32), c({4, 3}, DataType::FP32);
  Status s = run(id::kMatmul, {a.t(), b.t(), c.t()});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("kernel 'matmul'"));
  EXPECT_THAT(s.message(), HasSubstr("inner dims differ"));
  HostTensor b2({5, 3}, DataType::FP32), cbad({3, 3}, DataType::FP32), i8({5, 3}, DataType::INT8);
  EXPECT_THAT(run(id::kMatmul, {a.t(), b2.t(), cbad.t()}).message(), HasSubstr("C is 3x3"));
  EXPECT_THAT(run(id::kMatmul, {a.t(), i8.t(), c.t()}).message(), HasSubstr("B dtype INT8"));
  EXPECT_THAT(run(id::kMatmul, {a.t(), b2.t(), c.t()}, {0, 0, 0, 0}).message(), HasSubstr("0..3 scalars"));
}

}  // namespace
}  // namespace taskring::kernels
