// dsv4: a DeepSeek-V4-style decode step (docs/dsv4.md).
//
// Per layer: RMSNorm, low-rank query and compressed KV projections, RoPE,
// paged decode attention, output projection + residual; then a SwiGLU MLP
// (the first `dense_layers`) or a MoE block (router, top-k gating, shared
// expert, routed experts); after the last layer a final RMSNorm and the LM
// head. Parameters: batch, hidden, heads, kv_heads, head_dim, q_rank,
// kv_rank, ffn, experts, topk, expert_ffn, layers, dense_layers, vocab,
// context, block_size, balanced_routing, graph (1: one rt_submit_graph per
// decoder layer), full-shape (1: 43 layers, widths scaled down), seed.
// Graph on and off give bit-identical outputs; the golden is a double
// reference of the whole step (logits).
#pragma once

#include <memory>

#include "taskring/workloads/workload.hpp"

namespace taskring::workloads {

// The single-chip form: every routed expert and the whole LM head on one
// chip (catalog name "dsv4_chip").
std::unique_ptr<Workload> make_dsv4_chip_workload();

}  // namespace taskring::workloads
