// The single-process reference of the whole dsv4 step, in double, over the
// same inputs the device sees (all experts, the whole vocabulary).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "dsv4_problem.hpp"

namespace taskring::workloads::dsv4 {

namespace {

using Vec = std::vector<double>;

// Row-wise RMSNorm of `rows` rows of width d, scaled by w[0..d).
Vec rms(const Vec& x, const float* w, int64_t rows, int64_t d, double eps) {
  Vec out(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = &x[r * d];
    const double ms = std::inner_product(xr, xr + d, xr, 0.0) / static_cast<double>(d);
    const double inv = 1.0 / std::sqrt(ms + eps);
    for (int64_t i = 0; i < d; ++i) out[r * d + i] = xr[i] * inv * w[i];
  }
  return out;
}

// x [rows, k] · W [k, n], W row-major from `w`.
Vec mm(const Vec& x, const float* w, int64_t rows, int64_t k, int64_t n) {
  Vec y(static_cast<size_t>(rows * n), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < k; ++j) {
      const double a = x[r * k + j];
      const float* wr = w + j * n;
      double* yr = &y[r * n];
      for (int64_t c = 0; c < n; ++c) yr[c] += a * wr[c];
    }
  return y;
}

// silu(x·Wg) ⊙ (x·Wu) · Wd.
Vec swiglu_ffn(const Vec& x, const float* wg, const float* wu, const float* wd, int64_t rows, int64_t h, int64_t f) {
  Vec g = mm(x, wg, rows, h, f), u = mm(x, wu, rows, h, f);
  for (size_t i = 0; i < g.size(); ++i) g[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
  return mm(g, wd, rows, f, h);
}

// Rotate-half RoPE of one head vector at position pos.
void rope_head(double* v, const Problem& p, int64_t pos) {
  const int64_t half = p.s.head_dim / 2;
  for (int64_t i = 0; i < half; ++i) {
    const double c = p.cos[pos * half + i], s = p.sin[pos * half + i];
    const double a = v[i], b = v[i + half];
    v[i] = a * c - b * s;
    v[i + half] = b * c + a * s;
  }
}

// Attention sublayer of layer l: updates x in place and the caches.
void attention(const Problem& p, int64_t l, Vec& x, Vec& kc, Vec& vc) {
  const Shape& s = p.s;
  const int64_t B = s.batch, H = s.hidden, D = s.head_dim, KV = s.kv_heads, NH = s.heads;
  const int64_t Qw = s.q_width(), Kw = s.kv_width(), group = NH / KV;
  Vec xn = rms(x, p.attn_norm.data() + l * H, B, H, s.eps);
  Vec cq =
      rms(mm(xn, p.wdq.data() + l * H * s.q_rank, B, H, s.q_rank), p.q_norm.data() + l * s.q_rank, B, s.q_rank, s.eps);
  Vec q = mm(cq, p.wuq.data() + l * s.q_rank * Qw, B, s.q_rank, Qw);
  Vec ckv = rms(mm(xn, p.wdkv.data() + l * H * s.kv_rank, B, H, s.kv_rank), p.kv_norm.data() + l * s.kv_rank, B,
                s.kv_rank, s.eps);
  Vec kv = mm(ckv, p.wukv.data() + l * s.kv_rank * Kw, B, s.kv_rank, Kw);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < NH; ++h) rope_head(&q[b * Qw + h * D], p, p.positions[b]);
    for (int64_t h = 0; h < KV; ++h) {
      rope_head(&kv[b * Kw + h * D], p, p.positions[b]);
      const int64_t row = p.cache_row(l, b, h, s.context);
      for (int64_t i = 0; i < D; ++i) {
        // The device cache is FP32: the new rows are stored rounded.
        kc[row * D + i] = static_cast<float>(kv[b * Kw + h * D + i]);
        vc[row * D + i] = static_cast<float>(kv[b * Kw + (KV + h) * D + i]);
      }
    }
  }
  Vec attn(static_cast<size_t>(B * Qw), 0.0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  Vec sc(static_cast<size_t>(s.context + 1));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t qh = 0; qh < NH; ++qh) {
      const int64_t h = qh / group;
      const double* qv = &q[b * Qw + qh * D];
      double m = -INFINITY;
      for (int64_t t = 0; t <= s.context; ++t) {
        const double* kr = &kc[p.cache_row(l, b, h, t) * D];
        sc[t] = std::inner_product(qv, qv + D, kr, 0.0) * scale;
        m = std::max(m, sc[t]);
      }
      double sum = 0;
      for (double& v : sc) sum += (v = std::exp(v - m));
      for (int64_t t = 0; t <= s.context; ++t) {
        const double* vr = &vc[p.cache_row(l, b, h, t) * D];
        for (int64_t i = 0; i < D; ++i) attn[b * Qw + qh * D + i] += sc[t] / sum * vr[i];
      }
    }
  Vec o = mm(attn, p.wo.data() + l * Qw * H, B, Qw, H);
  for (size_t i = 0; i < x.size(); ++i) x[i] += o[i];
}

// The routed experts of MoE layer lm for every token: Σ_j gate_j · FFN_{e_j}(xn).
Vec routed(const Problem& p, int64_t lm, const Vec& xn) {
  const Shape& s = p.s;
  const int64_t B = s.batch, H = s.hidden, E = s.experts, Fe = s.expert_ffn;
  Vec logits = mm(xn, p.router.data() + lm * H * E, B, H, E);
  Vec out(static_cast<size_t>(B * H), 0.0);
  std::vector<int> order(static_cast<size_t>(E));
  for (int64_t t = 0; t < B; ++t) {
    const double* row = &logits[t * E];
    if (s.balanced) {
      for (int64_t j = 0; j < s.topk; ++j) order[j] = static_cast<int>((t * s.topk + j) % E);
    } else {
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return row[a] > row[b]; });
    }
    double m = -INFINITY, sum = 0;
    for (int64_t j = 0; j < s.topk; ++j) m = std::max(m, row[order[j]]);
    for (int64_t j = 0; j < s.topk; ++j) sum += std::exp(row[order[j]] - m);
    Vec xt(xn.begin() + t * H, xn.begin() + (t + 1) * H);
    for (int64_t j = 0; j < s.topk; ++j) {
      const int64_t e = order[j];
      const double gate = std::exp(row[e] - m) / sum;
      const int64_t base = (lm * E + e);
      Vec y = swiglu_ffn(xt, p.eg.data() + base * H * Fe, p.eu.data() + base * H * Fe, p.ed.data() + base * Fe * H, 1,
                         H, Fe);
      for (int64_t i = 0; i < H; ++i) out[t * H + i] += gate * y[i];
    }
  }
  return out;
}

}  // namespace

std::vector<double> reference_step(const Problem& p, std::vector<double>* x_out) {
  const Shape& s = p.s;
  const int64_t B = s.batch, H = s.hidden, F = s.ffn;
  Vec x(p.x.begin(), p.x.end());
  Vec kc(p.k_cache.begin(), p.k_cache.end()), vc(p.v_cache.begin(), p.v_cache.end());
  for (int64_t l = 0; l < s.layers; ++l) {
    attention(p, l, x, kc, vc);
    Vec xn = rms(x, p.ffn_norm.data() + l * H, B, H, s.eps);
    Vec y = swiglu_ffn(xn, p.wg.data() + l * H * F, p.wu.data() + l * H * F, p.wd.data() + l * F * H, B, H, F);
    if (l >= s.dense_layers) {
      Vec r = routed(p, l - s.dense_layers, xn);
      for (size_t i = 0; i < y.size(); ++i) y[i] += r[i];
    }
    for (size_t i = 0; i < x.size(); ++i) x[i] += y[i];
  }
  if (x_out != nullptr) *x_out = x;
  Vec xn = rms(x, p.final_norm.data(), B, H, s.eps);
  return mm(xn, p.lm_head.data(), B, H, s.vocab);
}

}  // namespace taskring::workloads::dsv4
