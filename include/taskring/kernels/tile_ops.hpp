// Elementwise, unary, reduction and broadcast operations on tiles.
//
// Every function takes Eigen dense expressions (Tile, Map, blocks) and
// writes `out`, which may alias an input. Arithmetic is FP32.
//
// IEEE behaviour, relied on by the tests:
//   * add/sub/mul/div: IEEE 754 (NaN in -> NaN out; x/0 = ±Inf; 0/0 = NaN).
//   * max/min propagate NaN: if either operand is NaN the result is NaN
//     (IEEE 754-2019 maximum/minimum, like torch.maximum), as do the row
//     reductions row_max and row_sum.
//   * relu(NaN) = NaN, relu(-0) = 0 (max with NaN propagation).
//   * exp(+Inf) = +Inf, exp(-Inf) = 0, log(0) = -Inf, log(<0) = NaN,
//     sqrt(<0) = NaN, rsqrt(0) = +Inf.
//   * sigmoid(+Inf) = 1, sigmoid(-Inf) = 0; silu and gelu return their
//     limits at ±Inf (silu(-Inf) = gelu(-Inf) = 0, silu(+Inf) = +Inf).
//   * gelu is the exact erf form 0.5·x·(1 + erf(x/√2)).
//
// exp, sigmoid, silu, gelu and rsqrt on operands whose rows are contiguous
// FP32 arrays (tiles, unit-column-stride maps, their rows) run on vec_math
// (AVX-512 / AVX2 / SSE2 chosen at run time); other expressions use Eigen.
// Both meet the bounds of docs/kernels.md §5.
#pragma once

#include <cmath>
#include <type_traits>

#include <Eigen/Core>

#include "taskring/kernels/tile_view.hpp"
#include "taskring/kernels/vec_math.hpp"

namespace taskring::tile {

enum class BinaryOp { kAdd, kSub, kMul, kDiv, kMax, kMin };
enum class UnaryOp { kExp, kLog, kSqrt, kRsqrt, kNeg, kAbs, kRelu, kSigmoid, kSilu, kGelu };

namespace detail {
// Eigen writes through a const reference to a temporary Map; this is the
// documented idiom for generic output arguments.
template <typename D>
D& out_ref(const Eigen::MatrixBase<D>& o) {
  return const_cast<D&>(o.derived());
}
using MaxNaN = Eigen::internal::scalar_max_op<float, float, Eigen::PropagateNaN>;
using MinNaN = Eigen::internal::scalar_min_op<float, float, Eigen::PropagateNaN>;
inline constexpr float kExpLow = -87.0f;               // exp(x) still a normal float
inline constexpr float kExpMinus64 = 1.60381089e-28f;  // e^-64

// True when every row of a D is one contiguous FP32 array that data() and
// outerStride() address: row-major with unit inner stride, or a vector with
// unit stride (then the whole vector is the one row).
template <typename D>
constexpr bool kFlatRows =
    std::is_same_v<typename D::Scalar, float> &&
    (int(Eigen::internal::traits<D>::Flags) & Eigen::DirectAccessBit) != 0 && D::InnerStrideAtCompileTime == 1 &&
    (D::IsRowMajor || D::IsVectorAtCompileTime);

// The vec_math kernel for `op`, or nullptr where Eigen's is kept.
inline void (*vec_unary(UnaryOp op))(const float*, float*, size_t) {
  const vec::Kernels& k = vec::active();
  switch (op) {
    case UnaryOp::kExp: return k.exp;
    case UnaryOp::kSigmoid: return k.sigmoid;
    case UnaryOp::kSilu: return k.silu;
    case UnaryOp::kGelu: return k.gelu;
    case UnaryOp::kRsqrt: return k.rsqrt;
    default: return nullptr;
  }
}

// Applies f row by row; false (nothing done) unless both sides are flat.
template <typename A, typename O>
bool unary_flat(void (*f)(const float*, float*, size_t), const Eigen::MatrixBase<A>& a, O& o) {
  if constexpr (kFlatRows<A> && kFlatRows<O>) {
    if (f == nullptr) return false;
    const float* src = a.derived().data();
    float* dst = o.data();
    if constexpr (A::IsVectorAtCompileTime && O::IsVectorAtCompileTime) {
      f(src, dst, static_cast<size_t>(a.size()));
      return true;
    } else if constexpr (A::IsVectorAtCompileTime || O::IsVectorAtCompileTime) {
      return false;  // a vector against a matrix: leave the layout questions to Eigen
    } else {
      const Eigen::Index ls = a.derived().outerStride(), os = o.outerStride();
      if (ls == a.cols() && os == a.cols()) {  // both dense: one call for the whole tile
        f(src, dst, static_cast<size_t>(a.size()));
        return true;
      }
      for (Eigen::Index r = 0; r < a.rows(); ++r) f(src + r * ls, dst + r * os, static_cast<size_t>(a.cols()));
      return true;
    }
  } else {
    (void)f, (void)a, (void)o;
    return false;
  }
}

inline float gelu_scalar(float x) {
  if (x == -INFINITY) return 0.0f;
  return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
}
}  // namespace detail

// out = a (op) b, elementwise. Precondition: equal shapes.
template <typename A, typename B, typename O>
void binary(BinaryOp op, const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b,
            const Eigen::MatrixBase<O>& out) {
  auto& o = detail::out_ref(out);
  switch (op) {
    case BinaryOp::kAdd: o = a + b; break;
    case BinaryOp::kSub: o = a - b; break;
    case BinaryOp::kMul: o = a.cwiseProduct(b); break;
    case BinaryOp::kDiv: o = a.cwiseQuotient(b); break;
    case BinaryOp::kMax: o = a.binaryExpr(b, detail::MaxNaN()); break;
    case BinaryOp::kMin: o = a.binaryExpr(b, detail::MinNaN()); break;
  }
}

// out = a (op) s, elementwise with a scalar right operand.
template <typename A, typename O>
void binary(BinaryOp op, const Eigen::MatrixBase<A>& a, float s, const Eigen::MatrixBase<O>& out) {
  auto& o = detail::out_ref(out);
  auto c = A::PlainObject::Constant(a.rows(), a.cols(), s);
  switch (op) {
    case BinaryOp::kAdd: o = (a.array() + s).matrix(); break;
    case BinaryOp::kSub: o = (a.array() - s).matrix(); break;
    case BinaryOp::kMul: o = a * s; break;
    case BinaryOp::kDiv: o = a / s; break;
    case BinaryOp::kMax: o = a.binaryExpr(c, detail::MaxNaN()); break;
    case BinaryOp::kMin: o = a.binaryExpr(c, detail::MinNaN()); break;
  }
}

// out = op(a), elementwise.
template <typename A, typename O>
void unary(UnaryOp op, const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<O>& out) {
  auto& o = detail::out_ref(out);
  if (detail::unary_flat(detail::vec_unary(op), a, o)) return;
  switch (op) {
    case UnaryOp::kExp:
      // Eigen's vector exp clamps its input at about -88.4, so exp(-Inf)
      // would be 2.9e-39 instead of 0. Inputs that low (masked softmax
      // entries) take a shifted path: exp(x) = exp(x + 64) · e^-64.
      if (a.size() == 0 || a.minCoeff() >= detail::kExpLow) {
        o = a.array().exp().matrix();
      } else {
        o = (a.array() >= detail::kExpLow)
                .select(a.array().exp(), (a.array() + 64.0f).exp() * detail::kExpMinus64)
                .matrix();
      }
      break;
    case UnaryOp::kLog: o = a.array().log().matrix(); break;
    case UnaryOp::kSqrt: o = a.array().sqrt().matrix(); break;
    case UnaryOp::kRsqrt: o = a.array().rsqrt().matrix(); break;
    case UnaryOp::kNeg: o = -a; break;
    case UnaryOp::kAbs: o = a.cwiseAbs(); break;
    case UnaryOp::kRelu: o = a.binaryExpr(A::PlainObject::Zero(a.rows(), a.cols()), detail::MaxNaN()); break;
    case UnaryOp::kSigmoid: o = (1.0f / (1.0f + (-a.array()).exp())).matrix(); break;
    case UnaryOp::kSilu:
      o = (a.array() == -INFINITY).select(0.0f, a.array() / (1.0f + (-a.array()).exp())).matrix();
      break;
    case UnaryOp::kGelu: o = a.unaryExpr([](float x) { return detail::gelu_scalar(x); }); break;
  }
}

// sums(r) = Σ_c a(r, c); maxes(r) = max_c a(r, c) with NaN propagation
// (-Inf for zero columns). `out` is resized to a.rows().
template <typename A>
void row_sum(const Eigen::MatrixBase<A>& a, ColVec& out) {
  out.resize(a.rows());
  for (Eigen::Index r = 0; r < a.rows(); ++r) out(r) = a.row(r).sum();
}
template <typename A>
void row_max(const Eigen::MatrixBase<A>& a, ColVec& out) {
  out.resize(a.rows());
  for (Eigen::Index r = 0; r < a.rows(); ++r)
    out(r) = a.cols() == 0 ? -INFINITY : a.row(r).template maxCoeff<Eigen::PropagateNaN>();
}

// Row broadcast: out(r, c) = a(r, c) (op) per_row(r) — e.g. subtract each
// row's max. Precondition: per_row.size() == a.rows().
template <typename A, typename O>
void broadcast_rows(BinaryOp op, const Eigen::MatrixBase<A>& a, const ColVec& per_row,
                    const Eigen::MatrixBase<O>& out) {
  auto& o = detail::out_ref(out);
  for (Eigen::Index r = 0; r < a.rows(); ++r) binary(op, a.row(r), per_row(r), o.row(r));
}

// Column broadcast: out(r, c) = a(r, c) (op) per_col(c) — e.g. scale each
// column by a weight vector. Precondition: per_col.size() == a.cols().
template <typename A, typename O>
void broadcast_cols(BinaryOp op, const Eigen::MatrixBase<A>& a, const RowVec& per_col,
                    const Eigen::MatrixBase<O>& out) {
  auto& o = detail::out_ref(out);
  for (Eigen::Index r = 0; r < a.rows(); ++r) binary(op, a.row(r), per_col, o.row(r));
}

}  // namespace taskring::tile
