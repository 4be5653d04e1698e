// The DeepSeek-V4-style decode step of workloads/dsv4: its shape, its seeded
// weights and inputs, and how they split across the chips of a node.
//
// Per layer l (all layers): RMSNorm; low-rank query (x·Wdq → RMSNorm → ·Wuq)
// and compressed KV (x·Wdkv → RMSNorm → ·Wukv = [k | v]); RoPE on q and k;
// the new k/v rows into a paged cache; paged decode attention per
// (sequence, KV head); ·Wo + residual. Then the FFN: layers l < dense_layers
// run a SwiGLU MLP; the others a MoE block (RMSNorm, router, top-k gating,
// a shared SwiGLU expert, and routed SwiGLU experts weighted by their gates),
// + residual. After the last layer: RMSNorm and the LM head → logits.
//
// Expert parallelism: chip c of `ep` owns experts [c·E/ep, (c+1)·E/ep);
// tensor parallelism of the LM head: chip c computes vocabulary columns
// [c·V/ep, (c+1)·V/ep).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "taskring/base/status.hpp"

namespace taskring::workloads::dsv4 {

struct Shape {
  int64_t batch = 0;         // sequences, one decode token each
  int64_t hidden = 0;        // H
  int64_t heads = 0;         // query heads
  int64_t kv_heads = 0;      // KV heads (heads % kv_heads == 0)
  int64_t head_dim = 0;      // D (even)
  int64_t q_rank = 0;        // Rq: compressed query width
  int64_t kv_rank = 0;       // Rkv: compressed KV width
  int64_t ffn = 0;           // F: dense MLP and shared expert width
  int64_t experts = 0;       // E routed experts
  int64_t topk = 0;          // experts per token
  int64_t expert_ffn = 0;    // Fe: routed expert width
  int64_t layers = 0;        // L
  int64_t dense_layers = 0;  // the first layers are dense
  int64_t vocab = 0;         // V
  int64_t context = 0;       // tokens already in the KV cache
  int64_t block_size = 0;    // tokens per KV-cache block
  int64_t balanced = 0;      // 1: round-robin routing (topk_gating mode 1)
  int64_t ep = 1;            // chips (EP for experts, TP for the LM head)
  float eps = 1e-6f;

  int64_t moe_layers() const { return layers - dense_layers; }
  int64_t q_width() const { return heads * head_dim; }
  int64_t kv_width() const { return 2 * kv_heads * head_dim; }  // [k | v]
  int64_t max_blocks() const { return context / block_size + 1; }
  int64_t pool() const { return batch * max_blocks(); }  // physical blocks per KV head
  int64_t cache_rows_per_layer() const { return kv_heads * pool() * block_size; }
  int64_t local_experts() const { return experts / ep; }
  int64_t local_vocab() const { return vocab / ep; }

  // INVALID_ARGUMENT naming the parameter and the rule that fails.
  Status validate() const;
};

// Host data of one step, all experts and the whole vocabulary. Weights are
// stacked over layers, row-major, [in, out] (y = x·W).
struct Problem {
  Shape s;
  std::vector<float> x;                    // [B, H]
  std::vector<float> attn_norm, ffn_norm;  // [L, H]
  std::vector<float> q_norm;               // [L, Rq]
  std::vector<float> kv_norm;              // [L, Rkv]
  std::vector<float> wdq;                  // [L·H, Rq]
  std::vector<float> wuq;                  // [L·Rq, heads·D]
  std::vector<float> wdkv;                 // [L·H, Rkv]
  std::vector<float> wukv;                 // [L·Rkv, 2·kv_heads·D]
  std::vector<float> wo;                   // [L·heads·D, H]
  std::vector<float> wg, wu;               // [L·H, F] (dense MLP / shared expert)
  std::vector<float> wd;                   // [L·F, H]
  std::vector<float> router;               // [max(Lm,1)·H, E]
  std::vector<float> eg, eu;               // [max(Lm,1)·E·H, Fe]
  std::vector<float> ed;                   // [max(Lm,1)·E·Fe, H]
  std::vector<float> k_cache, v_cache;     // [L·kv_heads·pool·bs, D]
  std::vector<float> cos, sin;             // [context+1, D/2]
  std::vector<int32_t> positions;          // [B], all = context
  std::vector<int32_t> block_table;        // [B, max_blocks]
  std::vector<float> final_norm;           // [H]
  std::vector<float> lm_head;              // [H, V]

  int64_t cache_row(int64_t layer, int64_t seq, int64_t head, int64_t token) const {
    const int64_t phys = block_table[seq * s.max_blocks() + token / s.block_size];
    return layer * s.cache_rows_per_layer() + (head * s.pool() + phys) * s.block_size + token % s.block_size;
  }
  // Physical block of the new token of sequence b.
  int32_t new_token_block(int64_t b) const { return block_table[b * s.max_blocks() + s.context / s.block_size]; }
};

// Seeded, deterministic inputs. Precondition: s.validate() is OK.
Problem make_problem(const Shape& s, uint64_t seed);

// The whole step in double: logits [B, V] (and the final hidden state [B, H]
// into `*x_out` when given). Routing uses the same top-k rule as
// topk_gating (ties to the lower expert id) on the double logits.
std::vector<double> reference_step(const Problem& p, std::vector<double>* x_out = nullptr);

// Chip c's experts of every MoE layer, compacted: rows
// [(lm·El + e)·rows_per_expert, ...) for e < El = E/ep, from `all`
// ([Lm·E·rows_per_expert, cols]).
std::vector<float> expert_slice(const Problem& p, const std::vector<float>& all, int64_t rows_per_expert, int64_t cols,
                                int64_t chip);

// The LM head slice of chip c: columns [c·V/ep, (c+1)·V/ep) of lm_head,
// row-major [H, V/ep].
std::vector<float> lm_head_slice(const Problem& p, int64_t chip);

}  // namespace taskring::workloads::dsv4
