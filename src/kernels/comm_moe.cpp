// MoE expert parallelism over a comm domain: dispatch, expert FFN, combine.
//
// Experts are split evenly: rank d owns experts [d·El, (d+1)·El), El = E/n.
// dispatch meets its peers once: (1) histogram of this rank's (token, k)
// routes per expert; (2) for each owner d, this rank's rows for d go into
// its own staging region of d's window (region r of n, T·K rows each),
// ordered by local expert, then (token, k), with weights and (src, token,
// k); then its El counts for d into d's counts slot r; then flags; (3) once
// every peer's flags are in, each owner stages its rows out in the
// canonical order: by local expert, then source rank, then (token, k).
// (Counts and rows travel in one exchange: no rank needs another's counts
// before it puts, because every source owns a region of its own.)
// combine: every received row's expert output is put back into its source's
// return slot (token, k), flags, then out[t] = Σ_k w[t,k]·ret[t,k].
#include <algorithm>
#include <cstring>
#include <vector>

#include "builtin_util.hpp"
#include "taskring/kernels/comm.hpp"
#include "taskring/kernels/comm_kernels.hpp"
#include "taskring/kernels/tile_matmul.hpp"
#include "taskring/kernels/vec_math.hpp"

namespace taskring::kernels {

using tile::View2D;
namespace cm = comm;

namespace {

bool contiguous(const View2D& v) {
  return (v.rows <= 1 || v.row_stride == v.cols) && (v.cols <= 1 || v.col_stride == 1);
}

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

// Zeroes rows [from, rows) of v: one memset per row when its elements are
// adjacent (the rows past the received ones are most of the tile).
void zero_rows(const View2D& v, int64_t from) {
  const size_t es = v.elem_size();
  for (int64_t i = from; i < v.rows; ++i) {
    if (v.unit_col_stride()) {
      std::memset(v.at(i, 0), 0, static_cast<size_t>(v.cols) * es);
    } else {
      for (int64_t q = 0; q < v.cols; ++q) std::memset(v.at(i, q), 0, es);
    }
  }
}

// Where dispatch's staged data sits in every window, and its sizes.
struct DispatchLayout {
  int64_t T, D, El, cap;
  uint64_t row_bytes;
  uint64_t counts_off, rx_off, rw_off, rm_off;  // window offsets: counts, staging rows, weights, meta
  uint64_t region;                              // staging rows per source: T·K
  uint64_t slot_words;                          // El counts, then the source's T
};

// Step (3) of dispatch, once every peer's flags are in: stages this rank's
// received rows out in the canonical order (local expert, source rank,
// (token, k)); rows past the received ones are zero.
void stage_out_received(const KernelArgs& k, const cm::CommContext& c, const DispatchLayout& l, const View2D& rx,
                        const View2D& rw, const View2D& rm, const View2D& rc) {
  const int n = c.nranks, r = c.rank;
  const int64_t T = l.T, El = l.El, cap = l.cap;
  const uint64_t row_bytes = l.row_bytes, rx_off = l.rx_off, rw_off = l.rw_off, rm_off = l.rm_off;
  const uint64_t region = l.region, slot_words = l.slot_words;
  const char* win = cm::window_of(c, r);
  const uint32_t* counts = reinterpret_cast<const uint32_t*>(win + l.counts_off);  // [src][El + 1]
  uint64_t got = 0;
  for (int s = 0; s < n; ++s) {
    const uint32_t* from = counts + slot_words * s;
    if (from[El] != static_cast<uint32_t>(T))
      return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT,
                          "rank %d routed %u tokens, this rank %lld: every rank must pass the same T", s, from[El],
                          static_cast<long long>(T));
    for (int64_t le = 0; le < El; ++le) got += from[le];
  }
  if (got > static_cast<uint64_t>(cap))
    return (void)k.fail(TASKRING_KERNEL_ERR_OUT_OF_RANGE, "rank %d receives %llu rows, more than the capacity %lld", r,
                        static_cast<unsigned long long>(got), static_cast<long long>(cap));
  char* out_x = static_cast<char*>(rx.data);
  char* out_m = static_cast<char*>(rm.data);
  auto put_w = [&](int64_t i, float v) { std::memcpy(rw.rows == 1 ? rw.at(0, i) : rw.at(i, 0), &v, 4); };
  std::vector<uint64_t> first(static_cast<size_t>(n), 0);  // next unread row of each source's region
  uint64_t row = 0;
  for (int64_t le = 0; le < El; ++le) {
    uint64_t for_expert = 0;
    for (int s = 0; s < n; ++s) {
      const uint64_t cnt = counts[slot_words * s + le];
      const uint64_t at = static_cast<uint64_t>(s) * region + first[static_cast<size_t>(s)];
      std::memcpy(out_x + row * row_bytes, win + rx_off + at * row_bytes, cnt * row_bytes);
      std::memcpy(out_m + 12 * row, win + rm_off + 12 * at, 12 * cnt);
      for (uint64_t i = 0; i < cnt; ++i) {
        float v;
        std::memcpy(&v, win + rw_off + 4 * (at + i), 4);
        put_w(static_cast<int64_t>(row + i), v);
      }
      first[static_cast<size_t>(s)] += cnt;
      row += cnt;
      for_expert += cnt;
    }
    const int32_t v = static_cast<int32_t>(for_expert);
    std::memcpy(rc.rows == 1 ? rc.at(0, le) : rc.at(le, 0), &v, 4);
  }
  std::memset(out_x + got * row_bytes, 0, (cap - got) * row_bytes);
  std::memset(out_m + 12 * got, 0, 12 * (cap - got));
  for (int64_t i = static_cast<int64_t>(got); i < cap; ++i) put_w(i, 0.0f);
}

}  // namespace

// Tensors: x [T, D] float, topk_ids [T, K] INT32, topk_w [T, K] FP32,
// recv_x [cap, D] (x's dtype), recv_w [cap] FP32, recv_meta [cap, 3] INT32,
// recv_count [El] INT32. Scalars: s0 ctx, s1 experts E, s2 counts offset
// (4·n·(El+1) B), s3 staging rows offset (n·T·K·D·es B), s4 staging weights
// offset (4·n·T·K B), s5 staging meta offset (12·n·T·K B). Every rank passes
// the same T (the staging regions are T·K rows each); a source whose T
// differs is an INVALID_ARGUMENT at the owners.
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
      !detail::check_dtype(k, rw, "recv_w", DataType::FP32) ||
      !detail::check_dtype(k, rm, "recv_meta", DataType::INT32) ||
      !detail::check_dtype(k, rc, "recv_count", DataType::INT32))
    return;
  const int n = c.nranks, r = c.rank;
  const int64_t T = x.rows, D = x.cols, K = ids.cols, cap = rx.rows;
  const int64_t E = static_cast<int64_t>(k.scalar(1));
  if (E < 1 || E % n != 0)
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT,
                        "experts %lld must be a positive multiple of the %d ranks", static_cast<long long>(E), n);
  const int64_t El = E / n;
  if (!need_shape(k, ids, "topk_ids", T, K) || !need_shape(k, w, "topk_w", T, K) ||
      !need_shape(k, rx, "recv_x", cap, D) || !need_shape(k, rw, "recv_w", cap, 1) ||
      !need_shape(k, rm, "recv_meta", cap, 3) || !need_shape(k, rc, "recv_count", El, 1) ||
      !need_contiguous(k, rx, "recv_x") || !need_contiguous(k, rm, "recv_meta"))
    return;
  const uint64_t es = x.elem_size(), row_bytes = static_cast<uint64_t>(D) * es;
  const uint64_t counts_off = k.scalar(2), rx_off = k.scalar(3), rw_off = k.scalar(4), rm_off = k.scalar(5);
  const uint64_t region = static_cast<uint64_t>(T * K);       // staging rows per source
  const uint64_t slot_words = static_cast<uint64_t>(El) + 1;  // El counts, then the source's T
  if (!cm::check_window_range(k, c, counts_off, 4 * slot_words * n, "moe counts") ||
      !cm::check_window_range(k, c, rx_off, row_bytes * region * n, "moe staging rows") ||
      !cm::check_window_range(k, c, rw_off, 4 * region * n, "moe staging weights") ||
      !cm::check_window_range(k, c, rm_off, 12 * region * n, "moe staging meta"))
    return;
  // (1) histogram, validating every expert id first.
  std::vector<uint32_t> hist(static_cast<size_t>(E), 0);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = 0; j < K; ++j) {
      const int32_t e = i32(ids, t, j);
      if (e < 0 || e >= E)
        return (void)k.fail(TASKRING_KERNEL_ERR_OUT_OF_RANGE, "topk_ids[%lld][%lld] = %d outside 0..%lld",
                            static_cast<long long>(t), static_cast<long long>(j), e, static_cast<long long>(E - 1));
      ++hist[static_cast<size_t>(e)];
    }
  // (2) rows into region r of their owner, by local expert then (token, k).
  std::vector<uint64_t> next(static_cast<size_t>(E), 0);  // next row in the owner's region, per expert
  for (int d = 0; d < n; ++d) {
    uint64_t row = 0;
    for (int64_t le = 0; le < El; ++le) {
      next[static_cast<size_t>(d * El + le)] = row;
      row += hist[static_cast<size_t>(d * El + le)];
    }
  }
  const uint32_t seq = cm::begin_collective(c);
  std::vector<char> packed;  // a row of a non-contiguous x
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = 0; j < K; ++j) {
      const int32_t e = i32(ids, t, j);
      const int d = static_cast<int>(e / El);
      const uint64_t row = static_cast<uint64_t>(r) * region + next[static_cast<size_t>(e)]++;
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
  // put, not a plain store: a rank on another node (L4) is reached by
  // request, in order, so the counts land after the rows they describe.
  std::vector<uint32_t> slot(slot_words);
  for (int d = 0; d < n; ++d) {
    std::memcpy(slot.data(), hist.data() + d * El, 4 * El);
    slot[static_cast<size_t>(El)] = static_cast<uint32_t>(T);
    if (!cm::put(k, c, d, counts_off + 4 * slot_words * r, slot.data(), 4 * slot_words)) return;
  }
  for (int p = 0; p < n; ++p)
    if (p != r) cm::post_flag(c, p, cm::token(seq, 1));
  if (!cm::wait_flags(k, c, nullptr, 0, cm::token(seq, 1), "moe_dispatch: routed rows")) return;
  stage_out_received(k, c, {T, D, El, cap, row_bytes, counts_off, rx_off, rw_off, rm_off, region, slot_words}, rx, rw,
                     rm, rc);
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
    return (void)(El < 1 || wg.rows != El * D ? k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT,
                                                       "w_gate is %lldx%lld, expected %lldx%lld (El*D x F)",
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
    vec::active().swiglu(s.t[0].data(), s.t[1].data(), s.t[0].data(), static_cast<size_t>(cnt * F));
    st = tile::matmul(g, rows(wd, le * F, F), ys);
    if (!st.ok()) return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "%s", st.message().c_str());
    off += cnt;
  }
  zero_rows(y, off);
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
  if (!detail::check_dtype(k, y, "recv_y", DataType::FP32) ||
      !detail::check_dtype(k, rm, "recv_meta", DataType::INT32) ||
      !detail::check_dtype(k, rc, "recv_count", DataType::INT32) ||
      !detail::check_dtype(k, w, "topk_w", DataType::FP32) || !detail::check_float(k, out, "out"))
    return;
  const int64_t cap = y.rows, D = y.cols, T = w.rows, K = w.cols;
  if (!need_shape(k, rm, "recv_meta", cap, 3) || !need_shape(k, out, "out", T, D) || !need_contiguous(k, y, "recv_y"))
    return;
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
