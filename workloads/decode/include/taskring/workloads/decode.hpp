// decode: one Qwen-style dense decode step (docs/graph.md#decode).
//
// Per layer: RMSNorm, QKV projection, RoPE on q and k, the new k/v rows into
// a paged KV cache, paged attention per (sequence, KV head), output
// projection + residual, RMSNorm, SwiGLU MLP (gate, up, down) + residual.
// Weights are stacked over layers; each layer sees views of its slice.
// Parameters: batch, hidden (= heads·head_dim), heads, kv_heads, head_dim,
// ffn, layers, context (tokens already cached), block_size, seed, and
// graph (1: one rt_submit_graph per layer, boundary = that layer's weight and
// KV-cache views + the hidden state; 0: the same body as ordinary tasks).
// Graph on and off give bit-identical outputs.
#pragma once

#include <memory>

#include "taskring/workloads/workload.hpp"

namespace taskring::workloads {

std::unique_ptr<Workload> make_decode_workload();

}  // namespace taskring::workloads
