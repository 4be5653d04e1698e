// decode workload: orchestration (one Graph body per layer) and host side.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "decode_reference.hpp"
#include "pto_orchestration_api.h"
#include "taskring/kernels/builtin_ids.hpp"
#include "taskring/workloads/decode.hpp"
#include "taskring/workloads/host_data.hpp"
#include "taskring/workloads/orch_views.hpp"

namespace taskring::workloads {
namespace {

namespace id = kernels::builtin_id;

// Entry (and boundary) scalars; the boundary carries all of them.
enum Scalar { kB, kH, kHeads, kKv, kD, kF, kLayers, kContext, kBs, kPool, kGraph, kEps, kFirstPhys };
// Entry tensors; the boundary has the same order with per-layer views.
enum Tensor { kX, kAttnNorm, kMlpNorm, kWqkv, kWo, kWg, kWu, kWd, kKc, kVc, kCos, kSin, kPos, kTable, kTensors };

uint32_t u32(uint64_t v) { return static_cast<uint32_t>(v); }

const ChipTensor& out0(const TaskOutputTensors& r) { return r.get_ref(0); }

// One decoder layer. Every tensor comes from the boundary or from a node of
// this body, every size from a boundary scalar.
void decode_layer(const GraphTaskArgs& a) {
  const uint32_t B = u32(a.scalar(kB)), H = u32(a.scalar(kH)), heads = u32(a.scalar(kHeads));
  const uint32_t kv = u32(a.scalar(kKv)), D = u32(a.scalar(kD)), F = u32(a.scalar(kF));
  const uint32_t ctx = u32(a.scalar(kContext)), bs = u32(a.scalar(kBs)), pool = u32(a.scalar(kPool));
  const uint32_t Q = (heads + 2 * kv) * D, group = heads / kv;
  const uint64_t eps_bits = a.scalar(kEps);
  const ChipTensor& x = *a.tensor(kX);
  const ChipTensor& kc = *a.tensor(kKc);
  const ChipTensor& vc = *a.tensor(kVc);
  const ChipTensor& table = *a.tensor(kTable);
  const uint32_t max_blocks = table.shapes[1];
  TensorCreateInfo bh({B, H}), bq({B, Q}), bf({B, F});

  CoreTaskArgs t1;
  t1.add_input(x).add_input(*a.tensor(kAttnNorm)).add_output(bh).add_scalars(&eps_bits, 1);
  TaskOutputTensors xn = rt_submit_aiv_task(id::kRmsNorm, t1);
  CoreTaskArgs t2;
  t2.add_input(out0(xn)).add_input(*a.tensor(kWqkv)).add_output(bq);
  TaskOutputTensors qkv_r = rt_submit_aic_task(id::kMatmul, t2);
  const ChipTensor& qkv = out0(qkv_r);
  // RoPE in place on q [B, heads, D] and k [B, kv, D].
  const ChipTensor q3 = strided_view(qkv, {B, heads, D}, {Q, D, 1}, 0);
  const ChipTensor k3 = strided_view(qkv, {B, kv, D}, {Q, D, 1}, heads * D);
  for (const ChipTensor* r : {&q3, &k3}) {
    CoreTaskArgs t;
    t.add_input(*r).add_input(*a.tensor(kCos)).add_input(*a.tensor(kSin)).add_input(*a.tensor(kPos)).add_output(*r);
    t.add_scalar(int64_t{0});
    rt_submit_aiv_task(id::kRope, t);
  }
  // The new token's k and v rows into the paged cache.
  for (uint32_t b = 0; b < B; ++b) {
    const uint32_t phys = u32(a.scalar(kFirstPhys + static_cast<int>(b)));
    for (uint32_t h = 0; h < kv; ++h) {
      const uint32_t row = (h * pool + phys) * bs + ctx % bs;
      for (int which = 0; which < 2; ++which) {
        const ChipTensor src = qkv.view({1, D}, {b, (heads + (which ? kv : 0) + h) * D});
        const ChipTensor dst = (which ? vc : kc).view({1, D}, {row, 0});
        CoreTaskArgs t;
        t.add_input(src).add_output(dst);
        rt_submit_aiv_task(id::kCopy, t);
      }
    }
  }
  // Attention per (sequence, KV head) into one allocation.
  TaskOutputTensors attn_r = alloc_tensors(bh);
  const ChipTensor& attn = out0(attn_r);
  for (uint32_t b = 0; b < B; ++b) {
    const ChipTensor tbl = table.view({1, max_blocks}, {b, 0});
    for (uint32_t h = 0; h < kv; ++h) {
      const ChipTensor qv = strided_view(qkv, {group, D}, {D, 1}, uint64_t{b} * Q + h * group * D);
      const ChipTensor kv3 =
          strided_view(kc, {pool, bs, D}, {bs * D, D, 1}, kc.start_offset + uint64_t{h} * pool * bs * D);
      const ChipTensor vv3 =
          strided_view(vc, {pool, bs, D}, {bs * D, D, 1}, vc.start_offset + uint64_t{h} * pool * bs * D);
      const ChipTensor ov = strided_view(attn, {group, D}, {D, 1}, uint64_t{b} * H + h * group * D);
      CoreTaskArgs t;
      t.add_input(qv).add_input(kv3).add_input(vv3).add_input(tbl).add_output(ov);
      t.add_scalar(int64_t{ctx + 1}).add_scalar(uint64_t{0}).add_scalar(int64_t{0});
      rt_submit_aiv_task(id::kPagedAttentionDecode, t);
    }
  }
  CoreTaskArgs t3;
  t3.add_input(attn).add_input(*a.tensor(kWo)).add_output(bh);
  TaskOutputTensors o = rt_submit_aic_task(id::kMatmul, t3);
  CoreTaskArgs t4;
  t4.add_input(x).add_input(out0(o)).add_output(x);
  rt_submit_aiv_task(id::kAdd, t4);
  // MLP.
  CoreTaskArgs t5;
  t5.add_input(x).add_input(*a.tensor(kMlpNorm)).add_output(bh).add_scalars(&eps_bits, 1);
  TaskOutputTensors xn2 = rt_submit_aiv_task(id::kRmsNorm, t5);
  CoreTaskArgs t6;
  t6.add_input(out0(xn2)).add_input(*a.tensor(kWg)).add_output(bf);
  TaskOutputTensors g = rt_submit_aic_task(id::kMatmul, t6);
  CoreTaskArgs t7;
  t7.add_input(out0(xn2)).add_input(*a.tensor(kWu)).add_output(bf);
  TaskOutputTensors up = rt_submit_aic_task(id::kMatmul, t7);
  CoreTaskArgs t8;
  t8.add_input(out0(g)).add_input(out0(up)).add_output(bf);
  TaskOutputTensors act = rt_submit_aiv_task(id::kSwiGlu, t8);
  CoreTaskArgs t9;
  t9.add_input(out0(act)).add_input(*a.tensor(kWd)).add_output(bh);
  TaskOutputTensors d = rt_submit_aic_task(id::kMatmul, t9);
  CoreTaskArgs t10;
  t10.add_input(x).add_input(out0(d)).add_output(x);
  rt_submit_aiv_task(id::kAdd, t10);
}

void decode_entry(const ChipTaskArgs& args) {
  const uint32_t L = u32(args.scalar(kLayers)), H = u32(args.scalar(kH)), F = u32(args.scalar(kF));
  const bool graph = args.scalar(kGraph) != 0;
  const ChipTensor& kc = *args.tensor(kKc);
  const uint32_t rows = kc.shapes[0] / L, D = kc.shapes[1];
  for (uint32_t l = 0; l < L; ++l) {
    const ChipTensor an = args.tensor(kAttnNorm)->view({1, H}, {l, 0}).reshape({H});
    const ChipTensor mn = args.tensor(kMlpNorm)->view({1, H}, {l, 0}).reshape({H});
    const ChipTensor& wqkv_all = *args.tensor(kWqkv);
    const ChipTensor wqkv = wqkv_all.view({H, wqkv_all.shapes[1]}, {l * H, 0});
    const ChipTensor wo = args.tensor(kWo)->view({H, H}, {l * H, 0});
    const ChipTensor wg = args.tensor(kWg)->view({H, F}, {l * H, 0});
    const ChipTensor wu = args.tensor(kWu)->view({H, F}, {l * H, 0});
    const ChipTensor wd = args.tensor(kWd)->view({F, H}, {l * F, 0});
    const ChipTensor kl = kc.view({rows, D}, {l * rows, 0});
    const ChipTensor vl = args.tensor(kVc)->view({rows, D}, {l * rows, 0});
    GraphTaskArgs g;
    g.add_inout(*args.tensor(kX)).add_input(an).add_input(mn).add_input(wqkv).add_input(wo).add_input(wg);
    g.add_input(wu).add_input(wd).add_inout(kl).add_inout(vl).add_input(*args.tensor(kCos));
    g.add_input(*args.tensor(kSin)).add_input(*args.tensor(kPos)).add_input(*args.tensor(kTable));
    g.add_scalars(args.scalars(), args.scalar_count());
    if (graph)
      rt_submit_graph(GRAPH_KEY("decode_layer"), decode_layer, g);
    else
      decode_layer(g);
  }
}

PTO2OrchestrationConfig decode_config(const ChipTaskArgs&) { return PTO2OrchestrationConfig{kTensors + kFirstPhys}; }

class DecodeWorkload final : public Workload {
 public:
  DecodeWorkload() {
    params_.add("batch", 2, 1, GRAPH_MAX_SCALAR_ARGS - kFirstPhys, "sequences (one decode token each)")
        .add("heads", 8, 1, 128, "query heads")
        .add("kv_heads", 2, 1, 128, "KV heads (heads must be a multiple)")
        .add("head_dim", 16, 2, 256, "head dimension (even); hidden = heads * head_dim")
        .add("ffn", 256, 1, 65536, "MLP intermediate size")
        .add("layers", 8, 1, 256, "decoder layers")
        .add("context", 48, 0, 1 << 16, "tokens already in the KV cache")
        .add("block_size", 16, 1, 1024, "tokens per KV-cache block")
        .add("graph", 1, 0, 1, "1: one rt_submit_graph per layer; 0: ordinary tasks")
        .add("seed", 1, 0, INT32_MAX, "seed of the random weights and caches");
  }
  std::string_view name() const override { return "decode"; }
  std::string_view summary() const override {
    return "Qwen-style dense decode step (RMSNorm, QKV, RoPE, paged attention, SwiGLU), one Graph per layer";
  }

  Status setup() override {
    decode::Problem& p = p_;
    p.batch = params_.get("batch");
    p.heads = params_.get("heads");
    p.kv_heads = params_.get("kv_heads");
    p.head_dim = params_.get("head_dim");
    p.hidden = p.heads * p.head_dim;
    p.ffn = params_.get("ffn");
    p.layers = params_.get("layers");
    p.context = params_.get("context");
    p.block_size = params_.get("block_size");
    if (p.heads % p.kv_heads != 0) {
      return invalid_argument("decode: heads " + std::to_string(p.heads) + " is not a multiple of kv_heads " +
                              std::to_string(p.kv_heads));
    }
    if (p.head_dim % 2 != 0) return invalid_argument("decode: head_dim " + std::to_string(p.head_dim) + " is odd");
    p.max_blocks = p.context / p.block_size + 1;
    p.pool = p.batch * p.max_blocks;
    const int64_t weights = p.layers * (p.hidden * (p.qkv() + p.hidden + 2 * p.ffn) + p.ffn * p.hidden);
    if (weights > (int64_t{1} << 28))
      return invalid_argument("decode: " + std::to_string(weights) + " weights exceed 2^28");
    const uint64_t seed = static_cast<uint64_t>(params_.get("seed"));
    std::mt19937_64 rng(seed);
    std::vector<int32_t> phys(static_cast<size_t>(p.pool));
    std::iota(phys.begin(), phys.end(), 0);
    std::shuffle(phys.begin(), phys.end(), rng);
    p.block_table.assign(phys.begin(), phys.end());
    auto weights_of = [&](int64_t n, int64_t fan_in, uint64_t s) {
      float r = 1.0f / std::sqrt(static_cast<float>(fan_in));
      return uniform_floats(static_cast<size_t>(n), s, -r, r);
    };
    const int64_t L = p.layers, H = p.hidden, F = p.ffn;
    p.x = uniform_floats(static_cast<size_t>(p.batch * H), seed * 11 + 1);
    p.attn_norm = uniform_floats(static_cast<size_t>(L * H), seed * 11 + 2, 0.5f, 1.5f);
    p.mlp_norm = uniform_floats(static_cast<size_t>(L * H), seed * 11 + 3, 0.5f, 1.5f);
    p.wqkv = weights_of(L * H * p.qkv(), H, seed * 11 + 4);
    p.wo = weights_of(L * H * H, H, seed * 11 + 5);
    p.wg = weights_of(L * H * F, H, seed * 11 + 6);
    p.wu = weights_of(L * H * F, H, seed * 11 + 7);
    p.wd = weights_of(L * F * H, F, seed * 11 + 8);
    const int64_t cache = L * p.cache_rows_per_layer() * p.head_dim;
    p.k_cache = uniform_floats(static_cast<size_t>(cache), seed * 11 + 9);
    p.v_cache = uniform_floats(static_cast<size_t>(cache), seed * 11 + 10);
    const int64_t half = p.head_dim / 2;
    p.cos.resize(static_cast<size_t>((p.context + 1) * half));
    p.sin.resize(p.cos.size());
    for (int64_t t = 0; t <= p.context; ++t)
      for (int64_t i = 0; i < half; ++i) {
        double theta = t * std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(p.head_dim));
        p.cos[t * half + i] = static_cast<float>(std::cos(theta));
        p.sin[t * half + i] = static_cast<float>(std::sin(theta));
      }
    p.positions.assign(static_cast<size_t>(p.batch), static_cast<int32_t>(p.context));
    want_ = decode::reference_decode(p);
    x_.resize(p.x.size());
    kc_.resize(p.k_cache.size());
    vc_.resize(p.v_cache.size());
    const auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
    tx_ = make_tensor_external(x_.data(), {u(p.batch), u(H)});
    tan_ = make_tensor_external(p.attn_norm.data(), {u(L), u(H)});
    tmn_ = make_tensor_external(p.mlp_norm.data(), {u(L), u(H)});
    twqkv_ = make_tensor_external(p.wqkv.data(), {u(L * H), u(p.qkv())});
    two_ = make_tensor_external(p.wo.data(), {u(L * H), u(H)});
    twg_ = make_tensor_external(p.wg.data(), {u(L * H), u(F)});
    twu_ = make_tensor_external(p.wu.data(), {u(L * H), u(F)});
    twd_ = make_tensor_external(p.wd.data(), {u(L * F), u(H)});
    tkc_ = make_tensor_external(kc_.data(), {u(L * p.cache_rows_per_layer()), u(p.head_dim)});
    tvc_ = make_tensor_external(vc_.data(), {u(L * p.cache_rows_per_layer()), u(p.head_dim)});
    tcos_ = make_tensor_external(p.cos.data(), {u(p.context + 1), u(half)});
    tsin_ = make_tensor_external(p.sin.data(), {u(p.context + 1), u(half)});
    tpos_ = make_tensor_external(p.positions.data(), {u(p.batch)}, DataType::INT32);
    ttable_ = make_tensor_external(p.block_table.data(), {u(p.batch), u(p.max_blocks)}, DataType::INT32);
    return Status::Ok();
  }

  ChipCallable callable() const override {
    ChipCallable c;
    c.name = "decode";
    c.entry = decode_entry;
    c.config = decode_config;
    return c;
  }

  Status bind_args(ChipTaskArgs& args) override {
    std::copy(p_.x.begin(), p_.x.end(), x_.begin());
    std::copy(p_.k_cache.begin(), p_.k_cache.end(), kc_.begin());
    std::copy(p_.v_cache.begin(), p_.v_cache.end(), vc_.begin());
    args.add_inout(tx_).add_input(tan_).add_input(tmn_).add_input(twqkv_).add_input(two_).add_input(twg_);
    args.add_input(twu_).add_input(twd_).add_inout(tkc_).add_inout(tvc_).add_input(tcos_).add_input(tsin_);
    args.add_input(tpos_).add_input(ttable_);
    args.add_scalar(p_.batch).add_scalar(p_.hidden).add_scalar(p_.heads).add_scalar(p_.kv_heads);
    args.add_scalar(p_.head_dim).add_scalar(p_.ffn).add_scalar(p_.layers).add_scalar(p_.context);
    args.add_scalar(p_.block_size).add_scalar(p_.pool).add_scalar(params_.get("graph")).add_scalar(p_.eps);
    for (int64_t b = 0; b < p_.batch; ++b) {
      args.add_scalar(static_cast<int64_t>(p_.block_table[b * p_.max_blocks + p_.context / p_.block_size]));
    }
    return Status::Ok();
  }

  Status check(GoldenStats* stats) const override {
    return compare_to_reference("decode hidden state", x_, want_, Tolerance{2e-4, 2e-3}, stats);
  }
  std::span<float> output() override { return x_; }
  uint64_t expected_tasks() const override {
    return static_cast<uint64_t>(params_.get("layers") * (12 + 3 * params_.get("batch") * params_.get("kv_heads")));
  }

 private:
  decode::Problem p_;
  std::vector<double> want_;
  std::vector<float> x_, kc_, vc_;
  ChipTensor tx_, tan_, tmn_, twqkv_, two_, twg_, twu_, twd_, tkc_, tvc_, tcos_, tsin_, tpos_, ttable_;
};

}  // namespace

std::unique_ptr<Workload> make_decode_workload() { return std::make_unique<DecodeWorkload>(); }

}  // namespace taskring::workloads
