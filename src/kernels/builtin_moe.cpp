// MoE router (top-k + softmax gating), gather rows, scatter-add rows.
#include <algorithm>
#include <cmath>
#include <vector>

#include "builtin_util.hpp"
#include "taskring/kernels/builtin.hpp"

namespace taskring::kernels {

using tile::View2D;

namespace {

// Reads an INT32 index vector given as [n], [1, n] or [n, 1].
bool index_vector(const KernelArgs& k, int i, const char* role, View2D* v) {
  if (!k.view(i, role, v) || !detail::check_dtype(k, *v, role, DataType::INT32)) return false;
  if (v->rows != 1 && v->cols != 1)
    return k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "%s must be a vector, got %lldx%lld", role,
                  static_cast<long long>(v->rows), static_cast<long long>(v->cols));
  return true;
}
int32_t index_at(const View2D& v, int64_t i) {
  int32_t x;
  std::memcpy(&x, v.rows == 1 ? v.at(0, i) : v.at(i, 0), 4);
  return x;
}

// Checks every index in [0, limit) before anything is written, so a bad
// index leaves the output untouched.
bool check_indices(const KernelArgs& k, const View2D& idx, const char* role, int64_t limit) {
  for (int64_t i = 0; i < idx.numel(); ++i) {
    const int32_t x = index_at(idx, i);
    if (x < 0 || x >= limit)
      return k.fail(TASKRING_KERNEL_ERR_OUT_OF_RANGE, "%s[%lld] = %d outside 0..%lld", role, static_cast<long long>(i),
                    x, static_cast<long long>(limit - 1));
  }
  return true;
}

// NaN ranks below every number; equal values keep the lower expert id first.
bool ranks_before(float a, int ia, float b, int ib) {
  const bool na = std::isnan(a), nb = std::isnan(b);
  if (na != nb) return nb;
  if (!na && a != b) return a > b;
  return ia < ib;
}

}  // namespace

extern "C" void taskring_builtin_topk_gating(int64_t* raw) {
  KernelArgs k(raw, "topk_gating");
  if (!k.usable() || !k.expect_counts(3, 3, 0, 2)) return;
  View2D lg, ids, w;
  if (!k.view(0, "logits", &lg) || !k.view(1, "topk_ids", &ids) || !k.view(2, "topk_weights", &w)) return;
  if (!detail::check_float(k, lg, "logits") || !detail::check_dtype(k, ids, "topk_ids", DataType::INT32) ||
      !detail::check_dtype(k, w, "topk_weights", DataType::FP32))
    return;
  if (!detail::check_same_shape(k, ids, "topk_ids", w, "topk_weights")) return;
  const int64_t tokens = lg.rows, experts = lg.cols, topk = ids.cols;
  if (ids.rows != tokens)
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "topk_ids has %lld rows for %lld tokens",
                        static_cast<long long>(ids.rows), static_cast<long long>(tokens));
  if (topk < 1 || topk > experts)
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "k = %lld must be in 1..%lld (experts)",
                        static_cast<long long>(topk), static_cast<long long>(experts));
  const uint64_t mode = k.scalar(0);
  if (mode > 1)
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "mode %llu: 0 top-k, 1 balanced round-robin",
                        static_cast<unsigned long long>(mode));
  const uint64_t token_base = k.scalar(1);

  auto& s = detail::scratch();
  tile::load(lg, s.t[0]);
  thread_local std::vector<int> order;
  order.resize(experts);
  thread_local std::vector<float> chosen;
  chosen.resize(topk);
  for (int64_t t = 0; t < tokens; ++t) {
    const float* row = s.t[0].row(t).data();
    if (mode == 0) {
      for (int64_t e = 0; e < experts; ++e) order[e] = static_cast<int>(e);
      std::partial_sort(order.begin(), order.begin() + topk, order.end(),
                        [&](int a, int b) { return ranks_before(row[a], a, row[b], b); });
    } else {
      // Round-robin over the global token index: tokens split across tiles
      // still spread evenly, and a token's k experts are distinct (k <= E).
      const uint64_t first = (token_base + static_cast<uint64_t>(t)) * static_cast<uint64_t>(topk);
      for (int64_t j = 0; j < topk; ++j) order[j] = static_cast<int>((first + j) % static_cast<uint64_t>(experts));
    }
    // Softmax over the chosen logits (= softmax over all, renormalised).
    float m = -INFINITY;
    bool nan = false;
    for (int64_t j = 0; j < topk; ++j) {
      chosen[j] = row[order[j]];
      nan |= std::isnan(chosen[j]);
      m = std::max(m, chosen[j]);
    }
    float sum = 0.0f;
    for (int64_t j = 0; j < topk; ++j) sum += (chosen[j] = std::exp(chosen[j] - m));
    for (int64_t j = 0; j < topk; ++j) {
      const int32_t id = order[j];
      const float wt = nan ? NAN : chosen[j] / sum;
      std::memcpy(ids.at(t, j), &id, 4);
      std::memcpy(w.at(t, j), &wt, 4);
    }
  }
}

extern "C" void taskring_builtin_gather_rows(int64_t* raw) {
  KernelArgs k(raw, "gather_rows");
  if (!k.usable() || !k.expect_counts(3, 3, 0, 0)) return;
  View2D src, idx, out;
  if (!k.view(0, "src", &src, false) || !index_vector(k, 1, "indices", &idx) || !k.view(2, "out", &out, false)) return;
  if (src.dtype != out.dtype)
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "out dtype %s differs from src dtype %s",
                        std::string(data_type_name(out.dtype)).c_str(), std::string(data_type_name(src.dtype)).c_str());
  if (out.rows != idx.numel() || out.cols != src.cols)
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT,
                        "out is %lldx%lld, expected %lldx%lld (indices x src cols)", static_cast<long long>(out.rows),
                        static_cast<long long>(out.cols), static_cast<long long>(idx.numel()),
                        static_cast<long long>(src.cols));
  if (!check_indices(k, idx, "indices", src.rows)) return;
  const size_t es = src.elem_size();
  for (int64_t r = 0; r < out.rows; ++r) {
    const int64_t from = index_at(idx, r);
    if (src.col_stride == 1 && out.col_stride == 1) {
      std::memmove(out.at(r, 0), src.at(from, 0), es * src.cols);
    } else {
      for (int64_t c = 0; c < src.cols; ++c) std::memmove(out.at(r, c), src.at(from, c), es);
    }
  }
}

extern "C" void taskring_builtin_scatter_add_rows(int64_t* raw) {
  KernelArgs k(raw, "scatter_add_rows");
  if (!k.usable() || !k.expect_counts(3, 4, 0, 0)) return;
  View2D src, idx, dst, wt;
  if (!k.view(0, "src", &src) || !index_vector(k, 1, "indices", &idx) || !k.view(2, "dst", &dst)) return;
  if (!detail::check_float(k, src, "src") || !detail::check_dtype(k, dst, "dst", DataType::FP32)) return;
  const bool weighted = k.tensor_count() == 4;
  if (weighted) {
    if (!k.view(3, "weights", &wt) || !detail::check_dtype(k, wt, "weights", DataType::FP32)) return;
    if ((wt.rows != 1 && wt.cols != 1) || wt.numel() != src.rows)
      return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "weights is %lldx%lld, expected a vector of %lld",
                          static_cast<long long>(wt.rows), static_cast<long long>(wt.cols),
                          static_cast<long long>(src.rows));
  }
  if (idx.numel() != src.rows || dst.cols != src.cols)
    return (void)k.fail(
        TASKRING_KERNEL_ERR_INVALID_ARGUMENT,
        "src is %lldx%lld with %lld indices, dst is %lldx%lld: need one index per src row and equal cols",
        static_cast<long long>(src.rows), static_cast<long long>(src.cols), static_cast<long long>(idx.numel()),
        static_cast<long long>(dst.rows), static_cast<long long>(dst.cols));
  if (!check_indices(k, idx, "indices", dst.rows)) return;
  auto& s = detail::scratch();
  tile::load(src, s.t[0]);
  // Rows are added in src order, so duplicates accumulate deterministically.
  for (int64_t r = 0; r < src.rows; ++r) {
    float w = 1.0f;
    if (weighted) std::memcpy(&w, wt.rows == 1 ? wt.at(0, r) : wt.at(r, 0), 4);
    float* d = static_cast<float*>(dst.at(index_at(idx, r), 0));
    const float* x = s.t[0].row(r).data();
    for (int64_t c = 0; c < src.cols; ++c) d[c * dst.col_stride] += w * x[c];
  }
}

}  // namespace taskring::kernels
