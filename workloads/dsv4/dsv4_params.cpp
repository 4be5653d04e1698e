#include "dsv4_params.hpp"

#include <cstring>

namespace taskring::workloads::dsv4 {

namespace {

constexpr int64_t kDefaultLayers = 4;

struct Preset {
  const char* name;
  int64_t value;
};
// --full-shape: the model's depth (43 layers, the first 3 dense) with the
// widths scaled down so one step runs in seconds on sim.
constexpr Preset kFullShape[] = {
    {"batch", 4},       {"hidden", 128},     {"heads", 8},   {"kv_heads", 1}, {"head_dim", 32},
    {"q_rank", 64},     {"kv_rank", 32},     {"ffn", 256},   {"experts", 16}, {"topk", 4},
    {"expert_ffn", 64}, {"dense_layers", 3}, {"vocab", 512}, {"context", 64}, {"block_size", 16},
};

}  // namespace

void declare_params(ParamSet& p) {
  p.add("batch", 2, 1, 32, "sequences (one decode token each)")
      .add("hidden", 64, 2, 4096, "hidden width H")
      .add("heads", 4, 1, 128, "query heads")
      .add("kv_heads", 2, 1, 128, "KV heads (heads must be a multiple)")
      .add("head_dim", 16, 2, 256, "head dimension (even)")
      .add("q_rank", 32, 1, 4096, "compressed query width (low-rank q projection)")
      .add("kv_rank", 16, 1, 4096, "compressed KV width (low-rank kv projection)")
      .add("ffn", 96, 1, 65536, "dense MLP and shared expert width")
      .add("experts", 8, 1, 256, "routed experts (a multiple of the chips)")
      .add("topk", 2, 1, 256, "experts per token")
      .add("expert_ffn", 32, 1, 65536, "routed expert width")
      .add("layers", kDefaultLayers, 1, 256, "decoder layers")
      .add("dense_layers", 1, 0, 256, "the first layers are dense (SwiGLU MLP), the rest MoE")
      .add("vocab", 128, 1, 1 << 20, "LM head columns (a multiple of the chips)")
      .add("context", 24, 0, 1 << 16, "tokens already in the KV cache")
      .add("block_size", 8, 1, 1024, "tokens per KV-cache block")
      .add("balanced_routing", 0, 0, 1, "1: round-robin expert choice instead of top-k")
      .add("graph", 1, 0, 1, "1: one rt_submit_graph per decoder layer; 0: ordinary tasks")
      .add("full-shape", 0, 0, 1, "1: 43 layers (3 dense), widths scaled down (overrides the width flags)")
      .add("seed", 1, 0, INT32_MAX, "seed of the weights, caches and inputs");
}

Expected<Shape> shape_from(const ParamSet& params, int64_t ep) {
  ParamSet p = params;
  if (p.get("full-shape") != 0) {
    for (const Preset& e : kFullShape) TASKRING_RETURN_IF_ERROR(p.set(e.name, e.value));
    if (p.get("layers") == kDefaultLayers) TASKRING_RETURN_IF_ERROR(p.set("layers", 43));
  }
  Shape s;
  s.batch = p.get("batch");
  s.hidden = p.get("hidden");
  s.heads = p.get("heads");
  s.kv_heads = p.get("kv_heads");
  s.head_dim = p.get("head_dim");
  s.q_rank = p.get("q_rank");
  s.kv_rank = p.get("kv_rank");
  s.ffn = p.get("ffn");
  s.experts = p.get("experts");
  s.topk = p.get("topk");
  s.expert_ffn = p.get("expert_ffn");
  s.layers = p.get("layers");
  s.dense_layers = p.get("dense_layers");
  s.vocab = p.get("vocab");
  s.context = p.get("context");
  s.block_size = p.get("block_size");
  s.balanced = p.get("balanced_routing");
  s.ep = ep;
  TASKRING_RETURN_IF_ERROR(s.validate());
  return s;
}

void add_entry_args(ChipTaskArgs& args, const EntryTensors& t, const Problem& p, const RunPart& part) {
  const Shape& s = p.s;
  for (int i = 0; i < kEntryTensors; ++i) {
    if (t[i].address_space == AddressSpace::DEVICE)
      args.add_no_dep(t[i]);
    else if (i == kX || i == kKc || i == kVc || i == kRouted)
      args.add_inout(t[i]);
    else if (i == kLogits)
      args.add_output(t[i]);
    else
      args.add_input(t[i]);
  }
  args.add_scalar(s.layers).add_scalar(s.dense_layers).add_scalar(part.layer_begin).add_scalar(part.layer_end);
  args.add_scalar(int64_t{part.head}).add_scalar(static_cast<int64_t>(part.mode)).add_scalar(int64_t{part.graph});
  const int64_t seqs = part.seq_count < 0 ? s.batch : part.seq_count;
  uint32_t eps_bits;
  std::memcpy(&eps_bits, &s.eps, 4);
  args.add_scalar(seqs).add_scalar(s.hidden).add_scalar(s.heads).add_scalar(s.kv_heads).add_scalar(s.head_dim);
  args.add_scalar(s.q_rank).add_scalar(s.kv_rank).add_scalar(s.ffn).add_scalar(s.experts);
  args.add_scalar(s.local_experts()).add_scalar(part.chip * s.local_experts()).add_scalar(s.topk);
  args.add_scalar(s.expert_ffn).add_scalar(uint64_t{eps_bits}).add_scalar(s.context).add_scalar(s.block_size);
  args.add_scalar(s.pool()).add_scalar(s.balanced);
  const RunPart::Comm& c = part.comm;
  args.add_scalar(c.ctx).add_scalar(c.counts).add_scalar(c.recv_x).add_scalar(c.recv_w).add_scalar(c.recv_meta);
  args.add_scalar(c.ret).add_scalar(c.gather).add_scalar(part.seq_begin).add_scalar(c.capacity);
  for (int64_t b = part.seq_begin; b < part.seq_begin + seqs; ++b)
    args.add_scalar(static_cast<int64_t>(p.new_token_block(b)));
}

uint64_t tasks_of(const Shape& s, const RunPart& part) {
  const int64_t seqs = part.seq_count < 0 ? s.batch : part.seq_count;
  const int64_t attention = 11 + 3 * seqs * s.kv_heads;  // alloc_tensors counted apart
  // MoE: norm, router, top-k, shared expert (4) + add; then moe_route and
  // 6 per local expert, or dispatch, expert FFN, combine, add (kEp).
  const int64_t moe = 8 + (part.mode == kEp ? 4 : 1 + 6 * s.local_experts());
  uint64_t n = 0;
  for (int64_t l = part.layer_begin; l < part.layer_end; ++l)
    n += static_cast<uint64_t>(attention + (l < s.dense_layers ? 6 : moe));
  return n + (part.head ? (part.mode == kEp ? 3 : 2) : 0);
}

}  // namespace taskring::workloads::dsv4
