#include "dsv4_problem.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "taskring/workloads/host_data.hpp"

namespace taskring::workloads::dsv4 {

namespace {

std::string n(int64_t v) { return std::to_string(v); }

}  // namespace

Status Shape::validate() const {
  if (heads % kv_heads != 0)
    return invalid_argument("dsv4: heads " + n(heads) + " is not a multiple of kv_heads " + n(kv_heads));
  if (head_dim % 2 != 0) return invalid_argument("dsv4: head_dim " + n(head_dim) + " is odd (RoPE rotates pairs)");
  if (dense_layers > layers)
    return invalid_argument("dsv4: dense_layers " + n(dense_layers) + " exceeds layers " + n(layers));
  if (topk > experts) return invalid_argument("dsv4: topk " + n(topk) + " exceeds experts " + n(experts));
  if (experts % ep != 0)
    return invalid_argument("dsv4: experts " + n(experts) + " is not a multiple of chips " + n(ep) +
                            " (expert parallelism gives every chip E/chips experts)");
  if (vocab % ep != 0)
    return invalid_argument("dsv4: vocab " + n(vocab) + " is not a multiple of chips " + n(ep) +
                            " (the LM head is split by columns)");
  const int64_t lm = std::max<int64_t>(moe_layers(), 1);
  const int64_t weights = layers * (2 * hidden * (q_rank + kv_rank) + q_rank * q_width() + kv_rank * kv_width() +
                                    q_width() * hidden + 3 * hidden * ffn) +
                          lm * (hidden * experts + 3 * experts * hidden * expert_ffn) + hidden * vocab;
  if (weights > (int64_t{1} << 27))
    return invalid_argument("dsv4: " + n(weights) + " weights exceed 2^27; lower the widths or layers");
  return Status::Ok();
}

Problem make_problem(const Shape& s, uint64_t seed) {
  Problem p;
  p.s = s;
  const int64_t L = s.layers, H = s.hidden, Lm = std::max<int64_t>(s.moe_layers(), 1);
  uint64_t stream = seed * 101;
  auto next = [&] { return ++stream; };
  auto weights = [&](int64_t count, int64_t fan_in) {
    const float r = 1.0f / std::sqrt(static_cast<float>(fan_in));
    return uniform_floats(static_cast<size_t>(count), next(), -r, r);
  };
  auto norm = [&](int64_t count) { return uniform_floats(static_cast<size_t>(count), next(), 0.5f, 1.5f); };
  p.x = uniform_floats(static_cast<size_t>(s.batch * H), next());
  p.attn_norm = norm(L * H);
  p.ffn_norm = norm(L * H);
  p.q_norm = norm(L * s.q_rank);
  p.kv_norm = norm(L * s.kv_rank);
  p.wdq = weights(L * H * s.q_rank, H);
  p.wuq = weights(L * s.q_rank * s.q_width(), s.q_rank);
  p.wdkv = weights(L * H * s.kv_rank, H);
  p.wukv = weights(L * s.kv_rank * s.kv_width(), s.kv_rank);
  p.wo = weights(L * s.q_width() * H, s.q_width());
  p.wg = weights(L * H * s.ffn, H);
  p.wu = weights(L * H * s.ffn, H);
  p.wd = weights(L * s.ffn * H, s.ffn);
  // Router logits spread wider than the other products so that the top-k
  // choice has margins far above FP32 rounding.
  p.router = uniform_floats(static_cast<size_t>(Lm * H * s.experts), next(), -1.0f, 1.0f);
  p.eg = weights(Lm * s.experts * H * s.expert_ffn, H);
  p.eu = weights(Lm * s.experts * H * s.expert_ffn, H);
  p.ed = weights(Lm * s.experts * s.expert_ffn * H, s.expert_ffn);
  const int64_t cache = L * s.cache_rows_per_layer() * s.head_dim;
  p.k_cache = uniform_floats(static_cast<size_t>(cache), next());
  p.v_cache = uniform_floats(static_cast<size_t>(cache), next());
  const int64_t half = s.head_dim / 2;
  p.cos.resize(static_cast<size_t>((s.context + 1) * half));
  p.sin.resize(p.cos.size());
  for (int64_t t = 0; t <= s.context; ++t)
    for (int64_t i = 0; i < half; ++i) {
      const double theta = t * std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(s.head_dim));
      p.cos[t * half + i] = static_cast<float>(std::cos(theta));
      p.sin[t * half + i] = static_cast<float>(std::sin(theta));
    }
  p.positions.assign(static_cast<size_t>(s.batch), static_cast<int32_t>(s.context));
  std::vector<int32_t> phys(static_cast<size_t>(s.pool()));
  std::iota(phys.begin(), phys.end(), 0);
  std::mt19937_64 rng(next());
  std::shuffle(phys.begin(), phys.end(), rng);
  p.block_table.assign(phys.begin(), phys.end());
  p.final_norm = norm(H);
  p.lm_head = weights(H * s.vocab, H);
  return p;
}

std::vector<float> expert_slice(const Problem& p, const std::vector<float>& all, int64_t rows_per_expert, int64_t cols,
                                int64_t chip) {
  const int64_t Lm = std::max<int64_t>(p.s.moe_layers(), 1), E = p.s.experts, El = p.s.local_experts();
  const int64_t block = El * rows_per_expert * cols;  // one layer's experts of this chip
  std::vector<float> out(static_cast<size_t>(Lm * block));
  for (int64_t lm = 0; lm < Lm; ++lm)
    std::copy_n(all.begin() + (lm * E + chip * El) * rows_per_expert * cols, block, out.begin() + lm * block);
  return out;
}

std::vector<float> lm_head_slice(const Problem& p, int64_t chip) {
  const int64_t H = p.s.hidden, V = p.s.vocab, Vl = p.s.local_vocab();
  std::vector<float> out(static_cast<size_t>(H * Vl));
  for (int64_t r = 0; r < H; ++r) std::copy_n(p.lm_head.begin() + r * V + chip * Vl, Vl, out.begin() + r * Vl);
  return out;
}

}  // namespace taskring::workloads::dsv4
