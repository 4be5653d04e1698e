#include <algorithm>
#include <cmath>

#include "paged_attention_reference.hpp"

namespace taskring::workloads::pa {

std::vector<double> reference_attention(const Problem& p) {
  const int64_t D = p.head_dim, group = p.num_heads / p.kv_heads;
  std::vector<double> out(p.batch * p.num_heads * D, 0.0);
  std::vector<double> scores;
  for (int64_t s = 0; s < p.batch; ++s) {
    const int64_t len = p.context_lens[s];
    for (int64_t qh = 0; qh < p.num_heads; ++qh) {
      const int64_t kvh = qh / group;
      const float* q = p.q.data() + (s * p.num_heads + qh) * D;
      // Row of token t in kv head kvh's cache.
      const auto row = [&](const std::vector<float>& cache, int64_t t) {
        const int64_t block = p.block_table[s * p.max_blocks + t / p.block_size];
        return cache.data() + ((kvh * p.num_blocks + block) * p.block_size + t % p.block_size) * D;
      };
      scores.assign(len, 0.0);
      double mx = -INFINITY;
      for (int64_t t = 0; t < len; ++t) {
        const float* k = row(p.k_cache, t);
        double dot = 0.0;
        for (int64_t d = 0; d < D; ++d) dot += static_cast<double>(q[d]) * k[d];
        scores[t] = dot * p.scale;
        mx = std::max(mx, scores[t]);
      }
      double sum = 0.0;
      for (double& x : scores) sum += (x = std::exp(x - mx));
      double* o = out.data() + (s * p.num_heads + qh) * D;
      for (int64_t t = 0; t < len; ++t) {
        const float* v = row(p.v_cache, t);
        const double w = scores[t] / sum;
        for (int64_t d = 0; d < D; ++d) o[d] += w * v[d];
      }
    }
  }
  return out;
}

}  // namespace taskring::workloads::pa
