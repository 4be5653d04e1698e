// dsv4 chip orchestration: the entry walks the layers this run owns and
// submits each as one Graph (or, with graph = 0, as the same ordinary
// tasks), then the final norm and this chip's LM-head columns.
#include "dsv4_orchestration.hpp"

#include <array>

#include "dsv4_args.hpp"
#include "pto_orchestration_api.h"
#include "taskring/kernels/builtin_ids.hpp"
#include "taskring/kernels/comm_kernels.hpp"
#include "taskring/workloads/orch_views.hpp"

namespace taskring::workloads::dsv4 {
namespace {

namespace id = kernels::builtin_id;

uint32_t u32(uint64_t v) { return static_cast<uint32_t>(v); }
const ChipTensor& out0(const TaskOutputTensors& r) { return r.get_ref(0); }

// y = x · w into a fresh [rows, n] output.
const ChipTensor& matmul(const ChipTensor& x, const ChipTensor& w, uint32_t rows, uint32_t n, TaskOutputTensors& keep) {
  const TensorCreateInfo out({rows, n});
  CoreTaskArgs t;
  t.add_input(x).add_input(w).add_output(out);
  keep = rt_submit_aic_task(id::kMatmul, t);
  return out0(keep);
}

const ChipTensor& rmsnorm(const ChipTensor& x, const ChipTensor& w, uint32_t rows, uint32_t n, uint64_t eps_bits,
                          TaskOutputTensors& keep) {
  const TensorCreateInfo out({rows, n});
  CoreTaskArgs t;
  t.add_input(x).add_input(w).add_output(out).add_scalars(&eps_bits, 1);
  keep = rt_submit_aiv_task(id::kRmsNorm, t);
  return out0(keep);
}

void add_into(const ChipTensor& x, const ChipTensor& y) {
  CoreTaskArgs t;
  t.add_input(x).add_input(y).add_output(x);
  rt_submit_aiv_task(id::kAdd, t);
}

// silu(x·wg) ⊙ (x·wu) · wd → a fresh [rows, h].
const ChipTensor& swiglu_ffn(const ChipTensor& x, const ChipTensor& wg, const ChipTensor& wu, const ChipTensor& wd,
                             uint32_t rows, uint32_t h, uint32_t f, TaskOutputTensors& keep) {
  TaskOutputTensors g, u, a;
  const ChipTensor& gt = matmul(x, wg, rows, f, g);
  const ChipTensor& ut = matmul(x, wu, rows, f, u);
  const TensorCreateInfo act({rows, f});
  CoreTaskArgs t;
  t.add_input(gt).add_input(ut).add_output(act);
  a = rt_submit_aiv_task(id::kSwiGlu, t);
  return matmul(out0(a), wd, rows, h, keep);
}

// Attention sublayer: x += Wo · attention(q, paged KV) with low-rank q and
// compressed KV; the new token's k/v rows go into the cache views.
void attention(const GraphTaskArgs& a) {
  const uint32_t B = u32(a.scalar(kB)), H = u32(a.scalar(kH)), NH = u32(a.scalar(kHeads));
  const uint32_t KV = u32(a.scalar(kKvHeads)), D = u32(a.scalar(kD)), Rq = u32(a.scalar(kRq));
  const uint32_t Rkv = u32(a.scalar(kRkv)), ctx = u32(a.scalar(kContext)), bs = u32(a.scalar(kBlockSize));
  const uint32_t pool = u32(a.scalar(kPool));
  const uint32_t Qw = NH * D, Kw = 2 * KV * D, group = NH / KV;
  const uint64_t eps = a.scalar(kEps);
  const ChipTensor& x = *a.tensor(bX);
  const ChipTensor& kc = *a.tensor(bKc);
  const ChipTensor& vc = *a.tensor(bVc);
  const ChipTensor& table = *a.tensor(bTable);
  TaskOutputTensors xn_r, cq_r, cqn_r, q_r, ckv_r, ckvn_r, kv_r, o_r;
  const ChipTensor& xn = rmsnorm(x, *a.tensor(bAttnNorm), B, H, eps, xn_r);
  const ChipTensor& cq = matmul(xn, *a.tensor(bWdq), B, Rq, cq_r);
  const ChipTensor& cqn = rmsnorm(cq, *a.tensor(bQNorm), B, Rq, eps, cqn_r);
  const ChipTensor& q = matmul(cqn, *a.tensor(bWuq), B, Qw, q_r);
  const ChipTensor& ckv = matmul(xn, *a.tensor(bWdkv), B, Rkv, ckv_r);
  const ChipTensor& ckvn = rmsnorm(ckv, *a.tensor(bKvNorm), B, Rkv, eps, ckvn_r);
  const ChipTensor& kv = matmul(ckvn, *a.tensor(bWukv), B, Kw, kv_r);
  // RoPE in place on q [B, heads, D] and on the k half of kv [B, kv_heads, D].
  const ChipTensor q3 = strided_view(q, {B, NH, D}, {Qw, D, 1}, 0);
  const ChipTensor k3 = strided_view(kv, {B, KV, D}, {Kw, D, 1}, 0);
  for (const ChipTensor* r : {&q3, &k3}) {
    CoreTaskArgs t;
    t.add_input(*r).add_input(*a.tensor(bCos)).add_input(*a.tensor(bSin)).add_input(*a.tensor(bPos)).add_output(*r);
    rt_submit_aiv_task(id::kRope, t);
  }
  for (uint32_t b = 0; b < B; ++b) {
    const uint32_t phys = u32(a.scalar(kFirstPhys + static_cast<int>(b)));
    for (uint32_t h = 0; h < KV; ++h) {
      const uint32_t row = (h * pool + phys) * bs + ctx % bs;
      for (uint32_t which = 0; which < 2; ++which) {
        const ChipTensor src = kv.view({1, D}, {b, (which * KV + h) * D});
        const ChipTensor dst = (which ? vc : kc).view({1, D}, {row, 0});
        CoreTaskArgs t;
        t.add_input(src).add_output(dst);
        rt_submit_aiv_task(id::kCopy, t);
      }
    }
  }
  const TensorCreateInfo attn_info({B, Qw});
  TaskOutputTensors attn_r = alloc_tensors(attn_info);
  const ChipTensor& attn = out0(attn_r);
  const uint32_t max_blocks = table.shapes[1];
  for (uint32_t b = 0; b < B; ++b) {
    const ChipTensor tbl = table.view({1, max_blocks}, {b, 0});
    for (uint32_t h = 0; h < KV; ++h) {
      const uint64_t head_rows = uint64_t{h} * pool * bs * D;
      const uint64_t q_first = uint64_t{b} * Qw + h * group * D;
      const ChipTensor qv = strided_view(q, {group, D}, {D, 1}, q_first);
      const ChipTensor kv3 = strided_view(kc, {pool, bs, D}, {bs * D, D, 1}, kc.start_offset + head_rows);
      const ChipTensor vv3 = strided_view(vc, {pool, bs, D}, {bs * D, D, 1}, vc.start_offset + head_rows);
      const ChipTensor ov = strided_view(attn, {group, D}, {D, 1}, q_first);
      CoreTaskArgs t;
      t.add_input(qv).add_input(kv3).add_input(vv3).add_input(tbl).add_output(ov);
      t.add_scalar(int64_t{ctx + 1}).add_scalar(uint64_t{0}).add_scalar(int64_t{0});
      rt_submit_aiv_task(id::kPagedAttentionDecode, t);
    }
  }
  add_into(x, matmul(attn, *a.tensor(bWo), B, H, o_r));
}

// A dense decoder layer: attention, then x += SwiGLU MLP.
void dense_layer(const GraphTaskArgs& a) {
  attention(a);
  const uint32_t B = u32(a.scalar(kB)), H = u32(a.scalar(kH)), F = u32(a.scalar(kF));
  const ChipTensor& x = *a.tensor(bX);
  TaskOutputTensors xn_r, y_r;
  const ChipTensor& xn = rmsnorm(x, *a.tensor(bFfnNorm), B, H, a.scalar(kEps), xn_r);
  add_into(x, swiglu_ffn(xn, *a.tensor(bWg), *a.tensor(bWu), *a.tensor(bWd), B, H, F, y_r));
}

// The routed experts across the chips (MoeMode::kEp): this chip's tokens
// go to the chips owning their experts (moe_dispatch), each chip runs its
// experts on what it received (moe_expert_ffn), the results come back and
// are summed with the gates (moe_combine); x += that. Kernels and window
// protocol: docs/comm.md.
void moe_ep(const GraphTaskArgs& a, const ChipTensor& xn, const ChipTensor& ids, const ChipTensor& wts) {
  namespace cid = kernels::comm_id;
  const uint32_t B = u32(a.scalar(kB)), H = u32(a.scalar(kH)), El = u32(a.scalar(kLocalExperts));
  const uint32_t cap = u32(a.scalar(kCapacity));
  const ChipTensor& x = *a.tensor(bX);
  const TensorCreateInfo rx_info({cap, H}), rw_info({cap}), rm_info({cap, 3}, DataType::INT32),
      rc_info({El}, DataType::INT32);
  CoreTaskArgs d;
  d.add_input(xn).add_input(ids).add_input(wts);
  d.add_output(rx_info).add_output(rw_info).add_output(rm_info).add_output(rc_info);
  for (int s : {kCommCtx, kE, kCountsOff, kRecvXOff, kRecvWOff, kRecvMetaOff}) d.add_scalar(a.scalar(s));
  TaskOutputTensors recv = rt_submit_aiv_task(cid::kMoeDispatch, d);
  const TensorCreateInfo ry_info({cap, H});
  CoreTaskArgs f;
  f.add_input(recv.get_ref(0)).add_input(recv.get_ref(3));
  f.add_input(*a.tensor(bEg)).add_input(*a.tensor(bEu)).add_input(*a.tensor(bEd)).add_output(ry_info);
  TaskOutputTensors y = rt_submit_aic_task(cid::kMoeExpertFfn, f);
  const TensorCreateInfo out_info({B, H});
  CoreTaskArgs c;
  c.add_input(out0(y)).add_input(recv.get_ref(2)).add_input(recv.get_ref(3)).add_input(wts).add_output(out_info);
  c.add_scalar(a.scalar(kCommCtx)).add_scalar(a.scalar(kRetOff));
  TaskOutputTensors routed = rt_submit_aiv_task(cid::kMoeCombine, c);
  add_into(x, out0(routed));
}

// A MoE decoder layer: attention, then x += shared expert + Σ gates · routed
// experts. The routed experts of this chip are computed on fixed-capacity
// token lists (moe_route: capacity = B, padding slots have gate 0) and
// added with scatter_add_rows into x (kLocal) or into the routed partial
// (kPartial). The experts go in ascending order, so the sum order is fixed.
void moe_layer(const GraphTaskArgs& a, int64_t mode) {
  attention(a);
  const uint32_t B = u32(a.scalar(kB)), H = u32(a.scalar(kH)), F = u32(a.scalar(kF));
  const uint32_t E = u32(a.scalar(kE)), El = u32(a.scalar(kLocalExperts)), K = u32(a.scalar(kTopk));
  const uint32_t Fe = u32(a.scalar(kFe));
  const ChipTensor& x = *a.tensor(bX);
  TaskOutputTensors xn_r, logits_r, shared_r;
  const ChipTensor& xn = rmsnorm(x, *a.tensor(bFfnNorm), B, H, a.scalar(kEps), xn_r);
  const ChipTensor& logits = matmul(xn, *a.tensor(bRouter), B, E, logits_r);
  const TensorCreateInfo ids_info({B, K}, DataType::INT32), wts_info({B, K});
  CoreTaskArgs gt;
  gt.add_input(logits).add_output(ids_info).add_output(wts_info);
  gt.add_scalar(a.scalar(kBalanced)).add_scalar(a.scalar(kTokenBase));
  TaskOutputTensors gate_r = rt_submit_aiv_task(id::kTopkGating, gt);
  add_into(x, swiglu_ffn(xn, *a.tensor(bWg), *a.tensor(bWu), *a.tensor(bWd), B, H, F, shared_r));
  if (mode == kEp) {
    moe_ep(a, xn, gate_r.get_ref(0), gate_r.get_ref(1));
    return;
  }
  CoreTaskArgs rt;
  rt.add_input(gate_r.get_ref(0)).add_input(gate_r.get_ref(1));
  const TensorCreateInfo rows_info({El, B}, DataType::INT32), gates_info({El, B});
  rt.add_output(rows_info).add_output(gates_info);
  rt.add_scalar(a.scalar(kExpertBase));
  TaskOutputTensors route_r = rt_submit_aiv_task(id::kMoeRoute, rt);
  const ChipTensor& rows = route_r.get_ref(0);
  const ChipTensor& gates = route_r.get_ref(1);
  const ChipTensor& dst = mode == kPartial ? *a.tensor(bRouted) : x;
  for (uint32_t e = 0; e < El; ++e) {
    const ChipTensor r = rows.view({1, B}, {e, 0}).reshape({B});
    const ChipTensor g = gates.view({1, B}, {e, 0}).reshape({B});
    const TensorCreateInfo tokens({B, H});
    CoreTaskArgs gather;
    gather.add_input(xn).add_input(r).add_output(tokens);
    TaskOutputTensors xe = rt_submit_aiv_task(id::kGatherRows, gather);
    const ChipTensor eg = a.tensor(bEg)->view({H, Fe}, {e * H, 0});
    const ChipTensor eu = a.tensor(bEu)->view({H, Fe}, {e * H, 0});
    const ChipTensor ed = a.tensor(bEd)->view({Fe, H}, {e * Fe, 0});
    TaskOutputTensors y_r;
    const ChipTensor& y = swiglu_ffn(out0(xe), eg, eu, ed, B, H, Fe, y_r);
    CoreTaskArgs scatter;
    scatter.add_input(y).add_input(r).add_inout(dst).add_input(g);
    rt_submit_aiv_task(id::kScatterAddRows, scatter);
  }
}

ChipTensor row_block(const ChipTensor& t, uint32_t rows, uint32_t first) {
  return t.view({rows, t.shapes[1]}, {first, 0});
}
ChipTensor row_vec(const ChipTensor& t, uint32_t row) {
  return t.view({1, t.shapes[1]}, {row, 0}).reshape({t.shapes[1]});
}

void dsv4_entry(const ChipTaskArgs& args) {
  const uint64_t* run = args.scalars();
  const uint64_t* body = run + kRunScalars;
  const int body_scalars = args.scalar_count() - kRunScalars;
  const uint32_t Ld = u32(run[kDenseLayers]);
  const bool graph = run[kGraph] != 0;
  const int64_t mode = static_cast<int64_t>(run[kMoeMode]);
  const uint32_t H = u32(body[kH]), Rq = u32(body[kRq]), Rkv = u32(body[kRkv]), F = u32(body[kF]);
  const uint32_t El = u32(body[kLocalExperts]);
  const uint32_t Fe = u32(body[kFe]), Qw = u32(body[kHeads]) * u32(body[kD]);
  const ChipTensor& kc = *args.tensor(kKc);
  const ChipTensor& vc = *args.tensor(kVc);
  const uint32_t cache_rows = kc.shapes[0] / u32(run[kLayers]);
  // The boundary points at these views: they must outlive the submit.
  std::array<ChipTensor, bMoeTensors> v;
  for (uint32_t l = u32(run[kLayerBegin]); l < u32(run[kLayerEnd]); ++l) {
    v[bX] = *args.tensor(kX);
    v[bAttnNorm] = row_vec(*args.tensor(kAttnNorm), l);
    v[bQNorm] = row_vec(*args.tensor(kQNorm), l);
    v[bKvNorm] = row_vec(*args.tensor(kKvNorm), l);
    v[bFfnNorm] = row_vec(*args.tensor(kFfnNorm), l);
    v[bWdq] = row_block(*args.tensor(kWdq), H, l * H);
    v[bWuq] = row_block(*args.tensor(kWuq), Rq, l * Rq);
    v[bWdkv] = row_block(*args.tensor(kWdkv), H, l * H);
    v[bWukv] = row_block(*args.tensor(kWukv), Rkv, l * Rkv);
    v[bWo] = row_block(*args.tensor(kWo), Qw, l * Qw);
    v[bWg] = row_block(*args.tensor(kWg), H, l * H);
    v[bWu] = row_block(*args.tensor(kWu), H, l * H);
    v[bWd] = row_block(*args.tensor(kWd), F, l * F);
    v[bKc] = row_block(kc, cache_rows, l * cache_rows);
    v[bVc] = row_block(vc, cache_rows, l * cache_rows);
    v[bCos] = *args.tensor(kCos);
    v[bSin] = *args.tensor(kSin);
    v[bPos] = *args.tensor(kPos);
    v[bTable] = *args.tensor(kTable);
    v[bRouted] = *args.tensor(kRouted);
    const bool moe = l >= Ld;
    if (moe) {
      const uint32_t lm = l - Ld, first = lm * El;  // the entry holds this chip's experts only
      v[bRouter] = row_block(*args.tensor(kRouter), H, lm * H);
      v[bEg] = row_block(*args.tensor(kEg), El * H, first * H);
      v[bEu] = row_block(*args.tensor(kEu), El * H, first * H);
      v[bEd] = row_block(*args.tensor(kEd), El * Fe, first * Fe);
    }
    GraphTaskArgs g;
    for (int i = 0; i < (moe ? bMoeTensors : bDenseTensors); ++i) {
      const bool written = i == bX || i == bKc || i == bVc || i == bRouted;
      if (written)
        g.add_inout(v[i]);
      else
        g.add_input(v[i]);
    }
    g.add_scalars(body, body_scalars);
    if (!moe) {
      if (graph)
        rt_submit_graph(GRAPH_KEY("dsv4_dense_layer"), dense_layer, g);
      else
        dense_layer(g);
    } else {
      if (graph)
        rt_submit_graph(GRAPH_KEY("dsv4_moe_layer"), moe_layer, g, mode);
      else
        moe_layer(g, mode);
    }
  }
  if (run[kHead] != 0) {
    const ChipTensor& logits = *args.tensor(kLogits);
    const uint32_t B = logits.shapes[0];  // every token of the step (kEp: all chips')
    ChipTensor x = *args.tensor(kX);
    TaskOutputTensors all_r;
    if (mode == kEp) {
      // TP LM head: every chip needs every token's hidden state.
      namespace cid = kernels::comm_id;
      const ChipTensor mine = x.reshape({u32(body[kB]) * H});
      const TensorCreateInfo all_info({B * H});
      CoreTaskArgs g;
      g.add_input(mine).add_output(all_info).add_scalar(body[kCommCtx]).add_scalar(body[kGatherOff]);
      all_r = rt_submit_aiv_task(cid::kAllgather, g);
      x = out0(all_r).reshape({B, H});
    }
    TaskOutputTensors xn_r;
    const ChipTensor& xn = rmsnorm(x, *args.tensor(kFinalNorm), B, H, body[kEps], xn_r);
    CoreTaskArgs t;
    t.add_input(xn).add_input(*args.tensor(kLmHead)).add_output(logits);
    rt_submit_aic_task(id::kMatmul, t);
  }
}

PTO2OrchestrationConfig dsv4_config(const ChipTaskArgs& args) {
  // Every body scalar up to the block of the first sequence; the per-sequence
  // blocks follow, one per row of x.
  const int batch = args.tensor_count() > kX ? static_cast<int>(args.tensor(kX)->shapes[0]) : 1;
  return PTO2OrchestrationConfig{static_cast<int>(kEntryTensors) + static_cast<int>(kRunScalars) + kFirstPhys + batch};
}

}  // namespace

ChipCallable dsv4_callable() {
  ChipCallable c;
  c.name = "dsv4";
  c.entry = dsv4_entry;
  c.config = dsv4_config;
  // The comm kernels (MoeMode::kEp); unused by the other modes.
  for (const kernels::CommKernel& k : kernels::comm_kernels())
    c.kernels.push_back(KernelBinding{k.id, k.fn, "", k.name});
  return c;
}

}  // namespace taskring::workloads::dsv4
