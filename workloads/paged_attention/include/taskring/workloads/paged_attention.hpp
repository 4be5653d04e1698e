// Batched decode attention over a paged KV cache
// (docs/workloads.md#paged_attention).
//
// `batch` sequences, each with one new query token of `num_heads` heads and a
// random context length in [1, max_context]. K and V live in blocks of
// `block_size` tokens, scattered at random over a shared pool and reached
// through a per-sequence block table. Grouped-query attention: query heads
// h·g .. h·g+g-1 (g = num_heads / kv_heads) share kv head h. One
// paged_attention_decode task per (sequence, kv head). Golden: a direct
// double-precision softmax(q·Kᵀ·scale)·V on the host.
// Parameters: batch, num_heads, kv_heads, head_dim, block_size, max_context,
// seed.
#pragma once

#include <memory>

#include "taskring/workloads/workload.hpp"

namespace taskring::workloads {

std::unique_ptr<Workload> make_paged_attention_workload();

}  // namespace taskring::workloads
