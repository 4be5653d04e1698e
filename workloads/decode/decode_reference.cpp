#include "decode_reference.hpp"

#include <cmath>

namespace taskring::workloads::decode {

namespace {

using Vec = std::vector<double>;

Vec rmsnorm(const Vec& x, const float* w, int64_t rows, int64_t d, double eps) {
  Vec out(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < d; ++i) ss += x[r * d + i] * x[r * d + i];
    double inv = 1.0 / std::sqrt(ss / static_cast<double>(d) + eps);
    for (int64_t i = 0; i < d; ++i) out[r * d + i] = x[r * d + i] * inv * w[i];
  }
  return out;
}

// [rows, k] x W[k, n] where W starts at `w` with row stride n.
Vec matmul(const Vec& a, const float* w, int64_t rows, int64_t k, int64_t n) {
  Vec out(static_cast<size_t>(rows * n), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < k; ++j) {
      double av = a[r * k + j];
      for (int64_t c = 0; c < n; ++c) out[r * n + c] += av * w[j * n + c];
    }
  return out;
}

void rope(double* v, const Problem& p, int64_t pos) {
  const int64_t half = p.head_dim / 2;
  for (int64_t i = 0; i < half; ++i) {
    double c = p.cos[pos * half + i], s = p.sin[pos * half + i];
    double x1 = v[i], x2 = v[i + half];
    v[i] = x1 * c - x2 * s;
    v[i + half] = x2 * c + x1 * s;
  }
}

}  // namespace

std::vector<double> reference_decode(const Problem& p) {
  const int64_t B = p.batch, H = p.hidden, D = p.head_dim, F = p.ffn, Q = p.qkv();
  const int64_t group = p.heads / p.kv_heads;
  Vec x(p.x.begin(), p.x.end());
  std::vector<double> kc(p.k_cache.begin(), p.k_cache.end()), vc(p.v_cache.begin(), p.v_cache.end());
  for (int64_t l = 0; l < p.layers; ++l) {
    Vec xn = rmsnorm(x, p.attn_norm.data() + l * H, B, H, p.eps);
    Vec qkv = matmul(xn, p.wqkv.data() + l * H * Q, B, H, Q);
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t h = 0; h < p.heads + p.kv_heads; ++h) rope(&qkv[b * Q + h * D], p, p.positions[b]);
      for (int64_t h = 0; h < p.kv_heads; ++h) {
        int64_t row = p.cache_row(l, b, h, p.context);
        for (int64_t i = 0; i < D; ++i) {
          kc[row * D + i] = static_cast<float>(qkv[b * Q + (p.heads + h) * D + i]);
          vc[row * D + i] = static_cast<float>(qkv[b * Q + (p.heads + p.kv_heads + h) * D + i]);
        }
      }
    }
    Vec attn(static_cast<size_t>(B * H), 0.0);
    const double scale = 1.0 / std::sqrt(static_cast<double>(D));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t qh = 0; qh < p.heads; ++qh) {
        const int64_t h = qh / group;
        const double* q = &qkv[b * Q + qh * D];
        Vec s(static_cast<size_t>(p.context + 1));
        double m = -INFINITY;
        for (int64_t t = 0; t <= p.context; ++t) {
          const double* k = &kc[p.cache_row(l, b, h, t) * D];
          double dot = 0;
          for (int64_t i = 0; i < D; ++i) dot += q[i] * k[i];
          s[t] = dot * scale;
          m = std::max(m, s[t]);
        }
        double sum = 0;
        for (double& v : s) sum += (v = std::exp(v - m));
        for (int64_t t = 0; t <= p.context; ++t) {
          const double* v = &vc[p.cache_row(l, b, h, t) * D];
          for (int64_t i = 0; i < D; ++i) attn[b * H + qh * D + i] += s[t] / sum * v[i];
        }
      }
    Vec o = matmul(attn, p.wo.data() + l * H * H, B, H, H);
    for (size_t i = 0; i < x.size(); ++i) x[i] += o[i];
    Vec xn2 = rmsnorm(x, p.mlp_norm.data() + l * H, B, H, p.eps);
    Vec g = matmul(xn2, p.wg.data() + l * H * F, B, H, F);
    Vec u = matmul(xn2, p.wu.data() + l * H * F, B, H, F);
    for (size_t i = 0; i < g.size(); ++i) g[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
    Vec d = matmul(g, p.wd.data() + l * F * H, B, F, H);
    for (size_t i = 0; i < x.size(); ++i) x[i] += d[i];
  }
  return x;
}

}  // namespace taskring::workloads::decode
