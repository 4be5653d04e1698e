// MoE expert parallelism over a comm domain: dispatch, expert FFN, combine.
//
// Experts are split evenly: rank d owns experts [d·El, (d+1)·El), El = E/n.
// dispatch: (1) histogram of this rank's (token, k) routes per destination
// expert; (2) the histogram is put into every rank's counts slot and the
// ranks meet (flags); (3) every rank now knows every count and computes the
// same prefix sums: at rank d, expert le's rows come first by le, then by
// source rank, then in (token, k) order; (4) token rows, weights and
// (src, token, k) are put straight into their final rows of the owners'
// windows, then flags; (5) the received rows are staged out.
// combine: every received row's expert output is put back into its source's
// return slot (token, k), flags, then out[t] = Σ_k w[t,k]·ret[t,k].
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "builtin_util.hpp"
#include "taskring/kernels/comm.hpp"
#include "taskring/kernels/comm_kernels.hpp"
#include "taskring/kernels/tile_matmul.hpp"

namespace taskring::kernels {

using tile::View2D;
namespace cm = comm;

namespace {

bool contiguous(const View2D& v) { return (v.rows <= 1 || v.row_stride == v.cols) && (v.cols <= 1 || v.col_stride == 1); }

bool need_contiguous(const KernelArgs& k, const View2D& v, const char* role) {
  if (contiguous(v)) return true;
  return k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "%s must be contiguous", role);
}

bool need_shape(const KernelArgs& k, const View2D& v, const char* role, int64_t rows, int64_t cols) {
  if (v.rows == rows && v.cols == cols) return true;
  if (cols == 1 && v.rows == 1 && v.cols == rows) return true;  // a vector given as [1, n]
  return k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "%s is %lldx%lld, expected %lldx%lld", role,
                static_cast<long long>(v.rows), static_cast<long long>(v.cols), static_cast<long long>(rows),
                static_cast<long long>(cols));
}

int32_t i32(const View2D& v, int64_t r, int64_t c) {
  int32_t x;
  std::memcpy(&x, v.at(r, c), 4);
  return x;
}
int32_t vec_i32(const View2D& v, int64_t i) { return v.rows == 1 ? i32(v, 0, i) : i32(v, i, 0); }

}  // namespace

// Tensors: x [T, D] float, topk_ids [T, K] INT32, topk_w [T, K] FP32,
// recv_x [cap, D] (x's dtype), recv_w [cap] FP32, recv_meta [cap, 3] INT32,
// recv_count [El] INT32. Scalars: s0 ctx, s1 experts E, s2 counts offset
// (4·n·n·El B), s3 recv_x offset (cap·D·es B), s4 recv_w offset (4·cap B),
// s5 recv_meta offset (12·cap B).
extern "C" void taskring_comm_moe_dispatch(int64_t* raw) {
  KernelArgs k(raw, "moe_dispatch");
  if (!k.usable() || !k.expect_counts(7, 7, 6, 6)) return;
  const cm::CommContext* cp = cm::context_arg(k, 0);
  if (cp == nullptr) return;
  const cm::CommContext& c = *cp;
  View2D x, ids, w, rx, rw, rm, rc;
  if (!k.view(0, "x", &x) || !k.view(1, "topk_ids", &ids, false) || !k.view(2, "topk_w", &w) ||
      !k.view(3, "recv_x", &rx) || !k.view(4, "recv_w", &rw) || !k.view(5, "recv_meta", &rm, false) ||
      !k.view(6, "recv_count", &rc, false))
    return;
  if (!detail::check_float(k, x, "x") || !detail::check_dtype(k, ids, "topk_ids", DataType::INT32) ||
      !detail::check_dtype(k, w, "topk_w", DataType::FP32) || !detail::check_dtype(k, rx, "recv_x", x.dtype) ||
      !detail::check_dtype(k, rw, "recv_w", DataType::FP32) || !detail::check_dtype(k, rm, "recv_meta", DataType::INT32) ||
      !detail::check_dtype(k, rc, "recv_count", DataType::INT32))
    return;
  const int n = c.nranks, r = c.rank;
  const int64_t T = x.rows, D = x.cols, K = ids.cols, cap = rx.rows;
  const int64_t E = static_cast<int64_t>(k.scalar(1));
  if (E < 1 || E % n != 0)
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "experts %lld must be a positive multiple of the %d ranks",
                        static_cast<long long>(E), n);
  const int64_t El = E / n;
  if (!need_shape(k, ids, "topk_ids", T, K) || !need_shape(k, w, "topk_w", T, K) || !need_shape(k, rx, "recv_x", cap, D) ||
      !need_shape(k, rw, "recv_w", cap, 1) || !need_shape(k, rm, "recv_meta", cap, 3) ||
      !need_shape(k, rc, "recv_count", El, 1) || !need_contiguous(k, rx, "recv_x") || !need_contiguous(k, rm, "recv_meta"))
    return;
  const uint64_t es = x.elem_size(), row_bytes = static_cast<uint64_t>(D) * es;
  const uint64_t counts_off = k.scalar(2), rx_off = k.scalar(3), rw_off = k.scalar(4), rm_off = k.scalar(5);
  const uint64_t hist_len = static_cast<uint64_t>(n) * El;
  if (!cm::check_window_range(k, c, counts_off, 4 * hist_len * n, "moe counts") ||
      !cm::check_window_range(k, c, rx_off, row_bytes * cap, "moe recv_x") ||
      !cm::check_window_range(k, c, rw_off, 4 * static_cast<uint64_t>(cap), "moe recv_w") ||
      !cm::check_window_range(k, c, rm_off, 12 * static_cast<uint64_t>(cap), "moe recv_meta"))
    return;
  // (1) histogram, validating every expert id first.
  std::vector<uint32_t> hist(hist_len, 0);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = 0; j < K; ++j) {
      const int32_t e = i32(ids, t, j);
      if (e < 0 || e >= E)
        return (void)k.fail(TASKRING_KERNEL_ERR_OUT_OF_RANGE, "topk_ids[%lld][%lld] = %d outside 0..%lld",
                            static_cast<long long>(t), static_cast<long long>(j), e, static_cast<long long>(E - 1));
      ++hist[static_cast<size_t>(e)];
    }
  // (2) exchange: slot r of every rank's counts region gets this histogram.
  const uint32_t seq = cm::begin_collective(c);
  // put, not a plain store: a rank on another node (L4) is reached by request.
  for (int p = 0; p < n; ++p)
    if (!cm::put(k, c, p, counts_off + 4 * hist_len * r, hist.data(), 4 * hist_len)) return;
  for (int p = 0; p < n; ++p)
    if (p != r) cm::post_flag(c, p, cm::token(seq, 1));
  if (!cm::wait_flags(k, c, nullptr, 0, cm::token(seq, 1), "moe_dispatch: routing counts")) return;
  const uint32_t* all = reinterpret_cast<const uint32_t*>(cm::window_of(c, r) + counts_off);  // [src][n·El]
  // (3) prefix sums: start[d][le][s] = first row at rank d of (expert le, source s).
  std::vector<uint64_t> start(static_cast<size_t>(n) * El * n);
  std::vector<uint64_t> total(static_cast<size_t>(n), 0);
  for (int d = 0; d < n; ++d) {
    uint64_t row = 0;
    for (int64_t le = 0; le < El; ++le)
      for (int s = 0; s < n; ++s) {
        start[(static_cast<size_t>(d) * El + le) * n + s] = row;
        row += all[static_cast<size_t>(s) * hist_len + static_cast<size_t>(d) * El + le];
      }
    total[d] = row;
    if (row > static_cast<uint64_t>(cap))
      return (void)k.fail(TASKRING_KERNEL_ERR_OUT_OF_RANGE, "rank %d receives %llu rows, more than the capacity %lld", d,
                          static_cast<unsigned long long>(row), static_cast<long long>(cap));
  }
  // (4) rows, weights and (src, token, k) into their final rows at the owners.
  std::vector<uint64_t> next(static_cast<size_t>(n) * El, 0);
  std::vector<char> packed;  // a row of a non-contiguous x
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = 0; j < K; ++j) {
      const int32_t e = i32(ids, t, j);
      const int d = static_cast<int>(e / El);
      const int64_t le = e % El;
      const uint64_t row = start[(static_cast<size_t>(d) * El + le) * n + r] + next[static_cast<size_t>(e)]++;
      const void* src = x.at(t, 0);
      if (!contiguous(x)) {
        packed.resize(row_bytes);
        for (int64_t q = 0; q < D; ++q) std::memcpy(packed.data() + q * es, x.at(t, q), es);
        src = packed.data();
      }
      const int32_t meta[3] = {r, static_cast<int32_t>(t), static_cast<int32_t>(j)};
      if (!cm::put(k, c, d, rx_off + row * row_bytes, src, row_bytes) ||
          !cm::put(k, c, d, rw_off + 4 * row, w.at(t, j), 4) || !cm::put(k, c, d, rm_off + 12 * row, meta, 12))
        return;
    }
  for (int p = 0; p < n; ++p)
    if (p != r) cm::post_flag(c, p, cm::token(seq, 2));
  if (!cm::wait_flags(k, c, nullptr, 0, cm::token(seq, 2), "moe_dispatch: token rows")) return;
  // (5) stage out; rows past the received ones are zero.
  const uint64_t got = total[r];
  const char* win = cm::window_of(c, r);
  std::memcpy(rx.data, win + rx_off, got * row_bytes);
  std::memset(static_cast<char*>(rx.data) + got * row_bytes, 0, (cap - got) * row_bytes);
  std::memcpy(rm.data, win + rm_off, 12 * got);
  std::memset(static_cast<char*>(rm.data) + 12 * got, 0, 12 * (cap - got));
  for (int64_t i = 0; i < cap; ++i) {
    float v = 0.0f;
    if (static_cast<uint64_t>(i) < got) std::memcpy(&v, win + rw_off + 4 * i, 4);
    std::memcpy(rw.rows == 1 ? rw.at(0, i) : rw.at(i, 0), &v, 4);
  }
  for (int64_t le = 0; le < El; ++le) {
    uint64_t cnt = 0;
    for (int s = 0; s < n; ++s) cnt += all[static_cast<size_t>(s) * hist_len + static_cast<size_t>(r) * El + le];
    const int32_t v = static_cast<int32_t>(cnt);
    std::memcpy(rc.rows == 1 ? rc.at(0, le) : rc.at(le, 0), &v, 4);
  }
}

// Tensors: recv_x [cap, D] float, recv_count [El] INT32, w_gate [El·D, F],
// w_up [El·D, F], w_down [El·F, D] (float), recv_y [cap, D] FP32.
// For each local expert le, rows [off_le, off_le + count_le):
// y = (silu(x·Wg) ∘ (x·Wu))·Wd, FP32 throughout; rows past the received
// ones are zero. No communication (a CommContext scalar, as
// submit_comm_group passes one, is accepted and ignored).
extern "C" void taskring_comm_moe_expert_ffn(int64_t* raw) {
  KernelArgs k(raw, "moe_expert_ffn");
  if (!k.usable() || !k.expect_counts(6, 6, 0, 1)) return;
  View2D x, rc, wg, wu, wd, y;
  if (!k.view(0, "recv_x", &x) || !k.view(1, "recv_count", &rc, false) || !k.view(2, "w_gate", &wg) ||
      !k.view(3, "w_up", &wu) || !k.view(4, "w_down", &wd) || !k.view(5, "recv_y", &y))
    return;
  if (!detail::check_float(k, x, "recv_x") || !detail::check_dtype(k, rc, "recv_count", DataType::INT32) ||
      !detail::check_float(k, wg, "w_gate") || !detail::check_float(k, wu, "w_up") ||
      !detail::check_float(k, wd, "w_down") || !detail::check_dtype(k, y, "recv_y", DataType::FP32))
    return;
  const int64_t cap = x.rows, D = x.cols, El = rc.numel(), F = wg.cols;
  if (El < 1 || wg.rows != El * D || !need_shape(k, wu, "w_up", El * D, F) || !need_shape(k, wd, "w_down", El * F, D) ||
      !need_shape(k, y, "recv_y", cap, D))
    return (void)(El < 1 || wg.rows != El * D
                      ? k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "w_gate is %lldx%lld, expected %lldx%lld (El*D x F)",
                               static_cast<long long>(wg.rows), static_cast<long long>(wg.cols),
                               static_cast<long long>(El * D), static_cast<long long>(F))
                      : false);
  int64_t off = 0;
  for (int64_t le = 0; le < El; ++le) {
    const int32_t cnt = vec_i32(rc, le);
    if (cnt < 0 || off + cnt > cap)
      return (void)k.fail(TASKRING_KERNEL_ERR_OUT_OF_RANGE, "recv_count[%lld] = %d overflows the %lld rows",
                          static_cast<long long>(le), cnt, static_cast<long long>(cap));
    off += cnt;
  }
  auto rows = [](const View2D& v, int64_t r0, int64_t nr) {
    View2D s = v;
    s.data = v.at(r0, 0);
    s.rows = nr;
    return s;
  };
  auto& s = detail::scratch();
  off = 0;
  for (int64_t le = 0; le < El; ++le) {
    const int64_t cnt = vec_i32(rc, le);
    if (cnt == 0) continue;
    const View2D xs = rows(x, off, cnt), ys = rows(y, off, cnt);
    s.t[0].resize(cnt, F);
    s.t[1].resize(cnt, F);
    View2D g{s.t[0].data(), DataType::FP32, cnt, F, F, 1}, u{s.t[1].data(), DataType::FP32, cnt, F, F, 1};
    Status st = tile::matmul(xs, rows(wg, le * D, D), g);
    if (st.ok()) st = tile::matmul(xs, rows(wu, le * D, D), u);
    if (!st.ok()) return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "%s", st.message().c_str());
    float* gp = s.t[0].data();
    const float* up = s.t[1].data();
    for (int64_t i = 0; i < cnt * F; ++i) gp[i] = gp[i] / (1.0f + std::exp(-gp[i])) * up[i];
    st = tile::matmul(g, rows(wd, le * F, F), ys);
    if (!st.ok()) return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "%s", st.message().c_str());
    off += cnt;
  }
  for (int64_t i = off; i < cap; ++i)
    for (int64_t q = 0; q < D; ++q) std::memset(y.at(i, q), 0, 4);
}

// Tensors: recv_y [cap, D] FP32, recv_meta [cap, 3] INT32, recv_count [El]
// INT32, topk_w [T, K] FP32, out [T, D] float. Scalars: s0 ctx, s1 return
// offset (4·T·K·D B in every window).
extern "C" void taskring_comm_moe_combine(int64_t* raw) {
  KernelArgs k(raw, "moe_combine");
  if (!k.usable() || !k.expect_counts(5, 5, 2, 2)) return;
  const cm::CommContext* cp = cm::context_arg(k, 0);
  if (cp == nullptr) return;
  const cm::CommContext& c = *cp;
  View2D y, rm, rc, w, out;
  if (!k.view(0, "recv_y", &y) || !k.view(1, "recv_meta", &rm, false) || !k.view(2, "recv_count", &rc, false) ||
      !k.view(3, "topk_w", &w) || !k.view(4, "out", &out))
    return;
  if (!detail::check_dtype(k, y, "recv_y", DataType::FP32) || !detail::check_dtype(k, rm, "recv_meta", DataType::INT32) ||
      !detail::check_dtype(k, rc, "recv_count", DataType::INT32) || !detail::check_dtype(k, w, "topk_w", DataType::FP32) ||
      !detail::check_float(k, out, "out"))
    return;
  const int64_t cap = y.rows, D = y.cols, T = w.rows, K = w.cols;
  if (!need_shape(k, rm, "recv_meta", cap, 3) || !need_shape(k, out, "out", T, D) || !need_contiguous(k, y, "recv_y")) return;
  const uint64_t ret_off = k.scalar(1), slot_bytes = 4 * static_cast<uint64_t>(D);
  if (!cm::check_window_range(k, c, ret_off, slot_bytes * T * K, "moe return slots")) return;
  int64_t got = 0;
  for (int64_t le = 0; le < rc.numel(); ++le) got += vec_i32(rc, le);
  if (got < 0 || got > cap)
    return (void)k.fail(TASKRING_KERNEL_ERR_OUT_OF_RANGE, "recv_count sums to %lld, capacity %lld",
                        static_cast<long long>(got), static_cast<long long>(cap));
  // Validate every (src, token, k) before the first put.
  for (int64_t i = 0; i < got; ++i) {
    const int32_t src = i32(rm, i, 0), t = i32(rm, i, 1), j = i32(rm, i, 2);
    if (src < 0 || src >= c.nranks || t < 0 || t >= T || j < 0 || j >= K)
      return (void)k.fail(TASKRING_KERNEL_ERR_OUT_OF_RANGE, "recv_meta[%lld] = (%d, %d, %d) outside (%d, %lld, %lld)",
                          static_cast<long long>(i), src, t, j, c.nranks, static_cast<long long>(T),
                          static_cast<long long>(K));
  }
  const uint32_t seq = cm::begin_collective(c);
  for (int64_t i = 0; i < got; ++i) {
    const int32_t src = i32(rm, i, 0), t = i32(rm, i, 1), j = i32(rm, i, 2);
    if (!cm::put(k, c, src, ret_off + slot_bytes * static_cast<uint64_t>(t * K + j), y.at(i, 0), slot_bytes)) return;
  }
  for (int p = 0; p < c.nranks; ++p)
    if (p != c.rank) cm::post_flag(c, p, cm::token(seq, 1));
  if (!cm::wait_flags(k, c, nullptr, 0, cm::token(seq, 1), "moe_combine: expert outputs")) return;
  const float* ret = reinterpret_cast<const float*>(cm::window_of(c, c.rank) + ret_off);
  std::vector<float> acc(static_cast<size_t>(D));
  for (int64_t t = 0; t < T; ++t) {
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (int64_t j = 0; j < K; ++j) {
      float wt;
      std::memcpy(&wt, w.at(t, j), 4);
      const float* row = ret + (t * K + j) * D;
      for (int64_t q = 0; q < D; ++q) acc[q] += wt * row[q];
    }
    for (int64_t q = 0; q < D; ++q) tile::write_from_float(out.at(t, q), out.dtype, acc[q]);
  }
}

}  // namespace taskring::kernels
