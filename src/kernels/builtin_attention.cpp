// Paged-attention decode tile: one query block against the KV blocks of one
// sequence, reached through its block table, with an online softmax.
#include <cmath>

#include "builtin_util.hpp"
#include "taskring/kernels/builtin.hpp"

namespace taskring::kernels {

using tile::View2D;

namespace {

// A KV cache [num_blocks, block_size, head_dim] (any strides).
struct Cache {
  const ChipTensor* t;
  int64_t blocks, block_size, dim;
  // Rows [lo, hi) of physical block b as a 2-D view.
  View2D rows(int64_t b, int64_t lo, int64_t hi) const {
    View2D v;
    v.dtype = t->dtype;
    v.data = t->data<char>() + (b * t->strides[0] + lo * t->strides[1]) * static_cast<int64_t>(t->elem_size());
    v.rows = hi - lo;
    v.cols = dim;
    v.row_stride = t->strides[1];
    v.col_stride = t->strides[2];
    return v;
  }
};

bool cache(const KernelArgs& k, int i, const char* role, Cache* c) {
  const ChipTensor* t = k.tensor(i, role);
  if (t == nullptr) return false;
  if (t->ndims != 3)
    return k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "%s must be [num_blocks, block_size, head_dim], got rank %u",
                  role, t->ndims);
  if (!detail::is_float_dtype(t->dtype))
    return k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "%s dtype %s is not FP32/BF16/FP16", role,
                  std::string(data_type_name(t->dtype)).c_str());
  *c = Cache{t, t->shapes[0], t->shapes[1], t->shapes[2]};
  return true;
}

}  // namespace

extern "C" void taskring_builtin_paged_attention_decode(int64_t* raw) {
  KernelArgs k(raw, "paged_attention_decode");
  if (!k.usable() || !k.expect_counts(5, 6, 1, 3)) return;
  View2D q, table, out, lse;
  Cache kc, vc;
  if (!k.view(0, "q", &q) || !cache(k, 1, "k_cache", &kc) || !cache(k, 2, "v_cache", &vc) ||
      !k.view(3, "block_table", &table) || !k.view(4, "out", &out))
    return;
  const bool want_lse = k.tensor_count() == 6;
  if (want_lse && (!k.view(5, "lse", &lse) || !detail::check_dtype(k, lse, "lse", DataType::FP32))) return;
  if (!detail::check_float(k, q, "q") || !detail::check_float(k, out, "out")) return;
  if (!detail::check_dtype(k, table, "block_table", DataType::INT32)) return;
  if (table.rows != 1)
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "block_table must be [max_blocks], got %lldx%lld",
                        static_cast<long long>(table.rows), static_cast<long long>(table.cols));
  const int64_t heads = q.rows, dim = q.cols, bs = kc.block_size;
  if (kc.dim != dim || vc.dim != dim || vc.blocks != kc.blocks || vc.block_size != bs)
    return (void)k.fail(
        TASKRING_KERNEL_ERR_INVALID_ARGUMENT,
        "k_cache [%lld,%lld,%lld] and v_cache [%lld,%lld,%lld] must match and head_dim must be q's %lld",
        static_cast<long long>(kc.blocks), static_cast<long long>(bs), static_cast<long long>(kc.dim),
        static_cast<long long>(vc.blocks), static_cast<long long>(vc.block_size), static_cast<long long>(vc.dim),
        static_cast<long long>(dim));
  if (!detail::check_same_shape(k, q, "q", out, "out")) return;
  if (want_lse && lse.numel() != heads)
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "lse has %lld entries for %lld query rows",
                        static_cast<long long>(lse.numel()), static_cast<long long>(heads));
  const int64_t ctx_len = static_cast<int64_t>(k.scalar(0));
  float scale = k.scalar_f32(1);
  if (scale == 0.0f) scale = dim > 0 ? 1.0f / std::sqrt(static_cast<float>(dim)) : 1.0f;
  const int64_t kv_start = static_cast<int64_t>(k.scalar(2));
  if (ctx_len < 0 || bs == 0 || ctx_len > table.cols * bs)
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT,
                        "context_len %lld outside 0..%lld (max_blocks %lld x block_size %lld)",
                        static_cast<long long>(ctx_len), static_cast<long long>(table.cols * bs),
                        static_cast<long long>(table.cols), static_cast<long long>(bs));
  if (kv_start < 0 || kv_start > ctx_len)
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "kv_start %lld outside 0..context_len %lld",
                        static_cast<long long>(kv_start), static_cast<long long>(ctx_len));
  const int64_t first_block = kv_start / bs, end_block = (ctx_len + bs - 1) / bs;
  for (int64_t j = first_block; j < end_block; ++j) {
    int32_t b;
    std::memcpy(&b, table.at(0, j), 4);
    if (b < 0 || b >= kc.blocks)
      return (void)k.fail(TASKRING_KERNEL_ERR_OUT_OF_RANGE, "block_table[%lld] = %d outside 0..%lld",
                          static_cast<long long>(j), b, static_cast<long long>(kc.blocks - 1));
  }

  auto& s = detail::scratch();
  tile::Tile &qt = s.t[0], &kv = s.t[1], &sc = s.t[2], &acc = s.t[3];
  tile::ColVec &m = s.v[0], &l = s.v[1], &blk = s.v[2];
  tile::load(q, qt);
  acc.setZero(heads, dim);
  m.setConstant(heads, -INFINITY);
  l.setZero(heads);
  for (int64_t j = first_block; j < end_block; ++j) {
    int32_t b;
    std::memcpy(&b, table.at(0, j), 4);
    const int64_t lo = std::max<int64_t>(kv_start - j * bs, 0);
    const int64_t hi = std::min<int64_t>(ctx_len - j * bs, bs);
    // S = scale · Q·Kᵀ over this block's valid rows.
    tile::load(kc.rows(b, lo, hi), kv);
    tile::matmul(qt, kv, sc, {.accumulate = false, .trans_a = false, .trans_b = true});
    sc *= scale;
    tile::row_max(sc, blk);
    for (int64_t h = 0; h < heads; ++h) {
      const float m_new = std::isnan(blk(h)) ? NAN : std::max(m(h), blk(h));
      if (m_new == -INFINITY) {  // every score so far is -Inf: nothing to add
        sc.row(h).setZero();
        continue;
      }
      const float alpha = std::exp(m(h) - m_new);  // exp(-Inf) = 0 on the first block
      tile::binary(tile::BinaryOp::kSub, sc.row(h), m_new, sc.row(h));
      tile::unary(tile::UnaryOp::kExp, sc.row(h), sc.row(h));
      l(h) = l(h) * alpha + sc.row(h).sum();
      acc.row(h) *= alpha;
      m(h) = m_new;
    }
    tile::load(vc.rows(b, lo, hi), kv);
    tile::matmul(sc, kv, acc, {.accumulate = true});
  }
  for (int64_t h = 0; h < heads; ++h) {
    if (l(h) == 0.0f) {  // empty range: defined as zeros and lse = -Inf
      acc.row(h).setZero();
      if (want_lse) {
        const float ninf = -INFINITY;
        std::memcpy(lse.rows == 1 ? lse.at(0, h) : lse.at(h, 0), &ninf, 4);
      }
      continue;
    }
    acc.row(h) /= l(h);
    if (want_lse) {
      const float v = m(h) + std::log(l(h));
      std::memcpy(lse.rows == 1 ? lse.at(0, h) : lse.at(h, 0), &v, 4);
    }
  }
  tile::store(acc, out);
}

}  // namespace taskring::kernels
