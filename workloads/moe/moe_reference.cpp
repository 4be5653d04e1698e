// The moe layer's inputs and golden (moe_reference.hpp): moved here from
// moe_workload.cpp unchanged in what they compute, so that the MPI anchor is
// checked by the very code that checks taskring's MoE step.
#include "taskring/workloads/moe_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "taskring/kernels/tile_cast.hpp"
#include "taskring/workloads/host_data.hpp"

namespace taskring::workloads {
namespace {

float f32(uint16_t b) { return tile::bf16_bits_to_float(b); }

void fill_bf16(uint16_t* d, uint64_t count, uint64_t seed, float scale) {
  auto v = uniform_floats(count, seed, -scale, scale);
  for (uint64_t i = 0; i < count; ++i) d[i] = tile::float_to_bf16_bits(v[i]);
}

// Top-k (or round-robin) experts and their softmax weights per (rank, token, k).
void reference_routes(const node::MoeShape& s, std::span<const MoeInputs> in, bool balanced, MoeReference& ref,
                      std::vector<double>& wts) {
  const int n = static_cast<int>(in.size());
  const uint32_t T = s.tokens, E = s.experts, K = s.topk;
  ref.ids.resize(static_cast<uint64_t>(n) * T * K);
  wts.resize(ref.ids.size());
  for (int r = 0; r < n; ++r)
    for (uint32_t t = 0; t < T; ++t) {
      const float* lg = in[r].logits + uint64_t{t} * E;
      std::vector<int> order(E);
      for (uint32_t e = 0; e < E; ++e) order[e] = static_cast<int>(e);
      if (!balanced) {
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return lg[a] > lg[b]; });
      } else {
        const uint64_t first = (uint64_t{T} * r + t) * K;
        for (uint32_t j = 0; j < K; ++j) order[j] = static_cast<int>((first + j) % E);
      }
      double m = -INFINITY, sum = 0;
      for (uint32_t j = 0; j < K; ++j) m = std::max(m, static_cast<double>(lg[order[j]]));
      for (uint32_t j = 0; j < K; ++j) sum += std::exp(lg[order[j]] - m);
      for (uint32_t j = 0; j < K; ++j) {
        const uint64_t i = (static_cast<uint64_t>(r) * T + t) * K + j;
        ref.ids[i] = order[j];
        wts[i] = std::exp(lg[order[j]] - m) / sum;
      }
    }
}

// One expert's SwiGLU FFN on one BF16 row, in double: y = (silu(x·Wg) ∘ (x·Wu))·Wd.
void expert_row(const node::MoeShape& s, const uint16_t* x, const uint16_t* wg, const uint16_t* wu, const uint16_t* wd,
                double* y) {
  const uint32_t D = s.hidden, F = s.ffn;
  std::vector<double> h(F);
  for (uint32_t f = 0; f < F; ++f) {
    double g = 0, u = 0;
    for (uint32_t q = 0; q < D; ++q) {
      g += double(f32(x[q])) * f32(wg[uint64_t(q) * F + f]);
      u += double(f32(x[q])) * f32(wu[uint64_t(q) * F + f]);
    }
    h[f] = g / (1.0 + std::exp(-g)) * u;
  }
  for (uint32_t q = 0; q < D; ++q) {
    double acc = 0;
    for (uint32_t f = 0; f < F; ++f) acc += h[f] * f32(wd[uint64_t(f) * D + q]);
    y[q] = acc;
  }
}

}  // namespace

void fill_moe_inputs(const node::MoeShape& s, int ranks, int rank, uint64_t seed, float* logits, uint16_t* x,
                     uint16_t* wg, uint16_t* wu, uint16_t* wd) {
  const uint32_t T = s.tokens, D = s.hidden, E = s.experts, F = s.ffn, El = E / static_cast<uint32_t>(ranks);
  const uint64_t base = seed * 101 + static_cast<uint64_t>(rank) * 7;
  auto lg = uniform_floats(uint64_t{T} * E, base + 0, -4.0f, 4.0f);
  std::memcpy(logits, lg.data(), lg.size() * 4);
  fill_bf16(x, uint64_t{T} * D, base + 1, 1.0f);
  const float ws = 1.0f / std::sqrt(static_cast<float>(D)), wds = 1.0f / std::sqrt(static_cast<float>(F));
  fill_bf16(wg, uint64_t{El} * D * F, base + 2, ws);
  fill_bf16(wu, uint64_t{El} * D * F, base + 3, ws);
  fill_bf16(wd, uint64_t{El} * F * D, base + 4, wds);
}

MoeReference moe_reference(const node::MoeShape& s, std::span<const MoeInputs> in, bool balanced) {
  const int n = static_cast<int>(in.size());
  const uint32_t T = s.tokens, D = s.hidden, E = s.experts, K = s.topk, F = s.ffn, El = E / n;
  MoeReference ref;
  std::vector<double> wts;
  reference_routes(s, in, balanced, ref, wts);
  // Rows per (destination, local expert), in (source, token, k) order, and
  // the expert's output per (src, t, j).
  ref.rows.resize(static_cast<uint64_t>(n) * El);
  std::vector<double> y_ret(static_cast<uint64_t>(n) * T * K * D, 0.0);
  for (int d = 0; d < n; ++d)
    for (uint32_t le = 0; le < El; ++le) {
      auto& rows = ref.rows[static_cast<uint64_t>(d) * El + le];
      for (int src = 0; src < n; ++src)
        for (uint32_t t = 0; t < T; ++t)
          for (uint32_t j = 0; j < K; ++j)
            if (ref.ids[(static_cast<uint64_t>(src) * T + t) * K + j] == static_cast<int32_t>(d * El + le))
              rows.push_back({src, static_cast<int32_t>(t), static_cast<int32_t>(j)});
      const uint16_t *wg = in[d].wg + uint64_t(le) * D * F, *wu = in[d].wu + uint64_t(le) * D * F,
                     *wd = in[d].wd + uint64_t(le) * F * D;
      for (const auto& m : rows)
        expert_row(s, in[m[0]].x + uint64_t(m[1]) * D, wg, wu, wd,
                   y_ret.data() + ((uint64_t(m[0]) * T + m[1]) * K + m[2]) * D);
    }
  ref.want.assign(static_cast<uint64_t>(n) * T * D, 0.0);
  for (int r = 0; r < n; ++r)
    for (uint32_t t = 0; t < T; ++t)
      for (uint32_t j = 0; j < K; ++j) {
        const uint64_t i = (static_cast<uint64_t>(r) * T + t) * K + j;
        for (uint32_t q = 0; q < D; ++q)
          ref.want[(static_cast<uint64_t>(r) * T + t) * D + q] += wts[i] * y_ret[i * D + q];
      }
  for (double v : ref.want) ref.peak = std::max(ref.peak, std::fabs(v));
  return ref;
}

Status check_moe_routes(const node::MoeShape& s, const MoeReference& ref, std::span<const MoeInputs> inputs, int first,
                        std::span<const MoeOutputs> outs, uint64_t* checked) {
  const int n = static_cast<int>(inputs.size());
  const uint32_t T = s.tokens, D = s.hidden, K = s.topk, El = s.experts / n, cap = s.cap(n);
  const int local = static_cast<int>(outs.size());
  for (int r = first; r < first + local; ++r)
    for (uint32_t t = 0; t < T; ++t)
      for (uint32_t j = 0; j < K; ++j) {
        const int32_t want = ref.ids[(static_cast<uint64_t>(r) * T + t) * K + j];
        int32_t got;
        std::memcpy(&got, static_cast<const char*>(outs[r - first].ids) + 4 * (uint64_t{t} * K + j), 4);
        if (got != want)
          return internal_error("moe: rank " + std::to_string(r) + " token " + std::to_string(t) + " slot " +
                                std::to_string(j) + " routed to expert " + std::to_string(got) + ", reference " +
                                std::to_string(want));
      }
  uint64_t elements = 0;
  for (int d = first; d < first + local; ++d) {
    const MoeOutputs& o = outs[d - first];
    uint64_t row = 0;
    for (uint32_t le = 0; le < El; ++le) {
      const auto& rows = ref.rows[static_cast<uint64_t>(d) * El + le];
      int32_t cnt;
      std::memcpy(&cnt, static_cast<const char*>(o.recv_count) + 4 * le, 4);
      if (cnt != static_cast<int32_t>(rows.size()))
        return internal_error("moe: rank " + std::to_string(d) + " expert " + std::to_string(le) + " received " +
                              std::to_string(cnt) + " rows, reference " + std::to_string(rows.size()));
      for (const auto& m : rows) {
        if (row >= cap) return internal_error("moe: reference rows exceed the capacity");
        const auto* meta = static_cast<const int32_t*>(o.recv_meta) + 3 * row;
        const auto* rx = static_cast<const uint16_t*>(o.recv_x) + row * D;
        const uint16_t* x = inputs[m[0]].x + uint64_t(m[1]) * D;
        if (meta[0] != m[0] || meta[1] != m[1] || meta[2] != m[2] || std::memcmp(rx, x, 2ull * D) != 0)
          return internal_error("moe: rank " + std::to_string(d) + " received row " + std::to_string(row) +
                                " is not (src " + std::to_string(m[0]) + ", token " + std::to_string(m[1]) + ", k " +
                                std::to_string(m[2]) + ") bit for bit");
        elements += D;
        ++row;
      }
    }
  }
  if (checked != nullptr) *checked = elements;
  return Status::Ok();
}

Status compare_moe_out(const node::MoeShape& s, const MoeReference& ref, int first, std::span<const MoeOutputs> outs,
                       GoldenStats* stats) {
  const uint64_t TD = uint64_t{s.tokens} * s.hidden, local = outs.size();
  const std::vector<double> want(ref.want.begin() + uint64_t(first) * TD,
                                 ref.want.begin() + (uint64_t(first) + local) * TD);
  std::vector<float> got(want.size());
  for (uint64_t r = 0; r < local; ++r)
    for (uint64_t i = 0; i < TD; ++i) got[r * TD + i] = f32(static_cast<const uint16_t*>(outs[r].out)[i]);
  return compare_to_reference("moe out", got, want, Tolerance{ref.peak / 128.0, 1.0 / 128.0}, stats);
}

Status check_moe_outputs(const node::MoeShape& s, const MoeReference& ref, std::span<const MoeInputs> inputs, int first,
                         std::span<const MoeOutputs> outs, GoldenStats* stats) {
  uint64_t checked = 0;
  TASKRING_RETURN_IF_ERROR(check_moe_routes(s, ref, inputs, first, outs, &checked));
  GoldenStats st;
  Status c = compare_moe_out(s, ref, first, outs, &st);
  if (stats != nullptr) {
    *stats = st;
    stats->checked += checked;
  }
  return c;
}

}  // namespace taskring::workloads
