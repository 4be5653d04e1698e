// Host reference of the decode step: plain loops in double over the same
// inputs (weights, caches, tables) the device sees.
#pragma once

#include <cstdint>
#include <vector>

namespace taskring::workloads::decode {

struct Problem {
  int64_t batch = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, layers = 0;
  int64_t context = 0, block_size = 0, max_blocks = 0, pool = 0;  // pool: physical blocks per KV head
  float eps = 1e-6f;
  std::vector<float> x;                    // [batch, hidden]
  std::vector<float> attn_norm, mlp_norm;  // [layers, hidden]
  std::vector<float> wqkv;                 // [layers·hidden, qkv]
  std::vector<float> wo;                   // [layers·hidden, hidden]
  std::vector<float> wg, wu;               // [layers·hidden, ffn]
  std::vector<float> wd;                   // [layers·ffn, hidden]
  std::vector<float> k_cache, v_cache;     // [layers·kv_heads·pool·block_size, head_dim]
  std::vector<float> cos, sin;             // [context+1, head_dim/2]
  std::vector<int32_t> positions;          // [batch], all = context
  std::vector<int32_t> block_table;        // [batch, max_blocks]
  int64_t qkv() const { return (heads + 2 * kv_heads) * head_dim; }
  int64_t cache_rows_per_layer() const { return kv_heads * pool * block_size; }
  int64_t cache_row(int64_t layer, int64_t seq, int64_t head, int64_t token) const {
    int64_t phys = block_table[seq * max_blocks + token / block_size];
    return layer * cache_rows_per_layer() + (head * pool + phys) * block_size + token % block_size;
  }
};

// The hidden state after all layers, [batch, hidden].
std::vector<double> reference_decode(const Problem& p);

}  // namespace taskring::workloads::decode
