// Host reference for the paged-attention workload (private to this folder).
#pragma once

#include <cstdint>
#include <vector>

namespace taskring::workloads::pa {

// Sizes and host buffers of one paged-attention problem.
//   q, out       [batch · num_heads, head_dim]
//   k/v cache    [kv_heads · num_blocks, block_size, head_dim]: kv head h's
//                pool is blocks h·num_blocks .. h·num_blocks + num_blocks-1
//   block_table  [batch, max_blocks] INT32: physical block of each logical
//                block (-1 where unused)
struct Problem {
  int64_t batch = 0, num_heads = 0, kv_heads = 0, head_dim = 0, block_size = 0, max_blocks = 0, num_blocks = 0;
  float scale = 1.0f;
  std::vector<int32_t> context_lens;  // [batch]
  std::vector<int32_t> block_table;
  std::vector<float> q, k_cache, v_cache;
};

// softmax(scale · q·Kᵀ)·V per query head, in double: [batch · num_heads, head_dim].
std::vector<double> reference_attention(const Problem& p);

}  // namespace taskring::workloads::pa
