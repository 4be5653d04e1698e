// Batched paged-attention decode on the built-in paged_attention_decode kernel.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "paged_attention_reference.hpp"
#include "pto_orchestration_api.h"
#include "taskring/kernels/builtin_ids.hpp"
#include "taskring/workloads/host_data.hpp"
#include "taskring/workloads/paged_attention.hpp"

namespace taskring::workloads {
namespace {

enum Scalar { kBatch, kNumHeads, kKvHeads, kScaleBits, kFirstContextLen };
constexpr int kTensors = 5;
constexpr int64_t kMaxBatch = CHIP_MAX_SCALAR_ARGS - kFirstContextLen;

PTO2OrchestrationConfig pa_config(const ChipTaskArgs&) { return PTO2OrchestrationConfig{kTensors + kFirstContextLen}; }

// Entry arguments: INPUT q [batch·H, D], INPUT k_cache and v_cache
// [kv_heads·num_blocks, block_size, D], INPUT block_table [batch, max_blocks]
// INT32, OUTPUT_EXISTING out [batch·H, D]; scalars batch, H, kv_heads, the
// FP32 scale's bits, then one context length per sequence. Every task only
// reads shared inputs and writes its own rows of `out`: no edges.
void pa_entry(const ChipTaskArgs& args) {
  const ChipTensor& q = *args.tensor(0);
  const ChipTensor& kc = *args.tensor(1);
  const ChipTensor& vc = *args.tensor(2);
  const ChipTensor& table = *args.tensor(3);
  const ChipTensor& out = *args.tensor(4);
  const uint32_t batch = static_cast<uint32_t>(args.scalar(kBatch));
  const uint32_t heads = static_cast<uint32_t>(args.scalar(kNumHeads));
  const uint32_t kv_heads = static_cast<uint32_t>(args.scalar(kKvHeads));
  const uint64_t scale_bits = args.scalar(kScaleBits);
  if (args.scalar_count() < kFirstContextLen + static_cast<int>(batch) || kv_heads == 0 || heads % kv_heads != 0) {
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS,
                    "paged_attention: %d scalars for batch %u (needs %u), num_heads %u, kv_heads %u",
                    args.scalar_count(), batch, kFirstContextLen + batch, heads, kv_heads);
    return;
  }
  const uint32_t dim = q.shapes[1], group = heads / kv_heads;
  const uint32_t pool = kc.shapes[0] / kv_heads, block_size = kc.shapes[1], max_blocks = table.shapes[1];
  for (uint32_t s = 0; s < batch; ++s) {
    const int64_t context_len = static_cast<int64_t>(args.scalar(kFirstContextLen + s));
    const ChipTensor tbl = table.view({1, max_blocks}, {s, 0});
    for (uint32_t h = 0; h < kv_heads; ++h) {
      const ChipTensor qv = q.view({group, dim}, {s * heads + h * group, 0});
      const ChipTensor kv = kc.view({pool, block_size, dim}, {h * pool, 0, 0});
      const ChipTensor vv = vc.view({pool, block_size, dim}, {h * pool, 0, 0});
      const ChipTensor ov = out.view({group, dim}, {s * heads + h * group, 0});
      CoreTaskArgs t;
      t.add_input(qv).add_input(kv).add_input(vv).add_input(tbl).add_output(ov);
      t.add_scalar(context_len).add_scalars(&scale_bits, 1).add_scalar(int64_t{0});  // kv_start 0
      rt_submit_aiv_task(kernels::builtin_id::kPagedAttentionDecode, t);
    }
  }
}

class PagedAttentionWorkload final : public Workload {
 public:
  PagedAttentionWorkload() {
    params_.add("batch", 8, 1, kMaxBatch, "sequences (one decode token each)")
        .add("num_heads", 16, 1, 256, "query heads")
        .add("kv_heads", 4, 1, 256, "KV heads (num_heads must be a multiple)")
        .add("head_dim", 128, 1, 512, "head dimension")
        .add("block_size", 64, 1, 1024, "tokens per KV-cache block")
        .add("max_context", 1024, 1, 1 << 20, "context lengths are uniform in [1, max_context]")
        .add("seed", 1, 0, INT32_MAX, "seed of the random inputs and context lengths");
  }

  std::string_view name() const override { return "paged_attention"; }
  std::string_view summary() const override {
    return "batched GQA decode attention over a block table, random context lengths";
  }

  Status setup() override {
    pa::Problem& p = p_;
    p.batch = params_.get("batch");
    p.num_heads = params_.get("num_heads");
    p.kv_heads = params_.get("kv_heads");
    p.head_dim = params_.get("head_dim");
    p.block_size = params_.get("block_size");
    const int64_t max_context = params_.get("max_context");
    if (p.num_heads % p.kv_heads != 0)
      return invalid_argument("paged_attention: num_heads " + std::to_string(p.num_heads) +
                              " is not a multiple of kv_heads " + std::to_string(p.kv_heads));
    p.max_blocks = (max_context + p.block_size - 1) / p.block_size;
    const uint64_t seed = static_cast<uint64_t>(params_.get("seed"));
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int32_t> len_dist(1, static_cast<int32_t>(max_context));
    p.context_lens.resize(p.batch);
    p.num_blocks = 0;
    for (int32_t& len : p.context_lens) {
      len = len_dist(rng);
      p.num_blocks += (len + p.block_size - 1) / p.block_size;
    }
    const int64_t cache_floats = p.kv_heads * p.num_blocks * p.block_size * p.head_dim;
    if (cache_floats > (int64_t{1} << 27))
      return invalid_argument("paged_attention: the KV cache would hold " + std::to_string(cache_floats) +
                              " floats per K and V, more than the 2^27 this workload allows; lower batch, "
                              "kv_heads, head_dim or max_context");
    // Scatter the logical blocks over the pool in a random order.
    std::vector<int32_t> physical(p.num_blocks);
    std::iota(physical.begin(), physical.end(), 0);
    std::shuffle(physical.begin(), physical.end(), rng);
    p.block_table.assign(p.batch * p.max_blocks, -1);
    size_t next = 0;
    for (int64_t s = 0; s < p.batch; ++s)
      for (int64_t j = 0; j * p.block_size < p.context_lens[s]; ++j)
        p.block_table[s * p.max_blocks + j] = physical[next++];
    p.scale = 1.0f / std::sqrt(static_cast<float>(p.head_dim));
    p.q = uniform_floats(p.batch * p.num_heads * p.head_dim, seed * 3 + 0);
    p.k_cache = uniform_floats(cache_floats, seed * 3 + 1);
    p.v_cache = uniform_floats(cache_floats, seed * 3 + 2);
    want_ = pa::reference_attention(p);
    out_.assign(want_.size(), 0.0f);

    const auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
    tq_ = make_tensor_external(p.q.data(), {u(p.batch * p.num_heads), u(p.head_dim)});
    const uint32_t cache_shape[3] = {u(p.kv_heads * p.num_blocks), u(p.block_size), u(p.head_dim)};
    tk_ = make_tensor_external(p.k_cache.data(), cache_shape, 3);
    tv_ = make_tensor_external(p.v_cache.data(), cache_shape, 3);
    ttable_ = make_tensor_external(p.block_table.data(), {u(p.batch), u(p.max_blocks)}, DataType::INT32);
    tout_ = make_tensor_external(out_.data(), {u(p.batch * p.num_heads), u(p.head_dim)});
    return Status::Ok();
  }

  ChipCallable callable() const override {
    ChipCallable c;
    c.name = "paged_attention";
    c.entry = pa_entry;
    c.config = pa_config;
    return c;
  }

  Status bind_args(ChipTaskArgs& args) override {
    std::fill(out_.begin(), out_.end(), NAN);
    args.add_input(tq_).add_input(tk_).add_input(tv_).add_input(ttable_).add_output(tout_);
    args.add_scalar(p_.batch).add_scalar(p_.num_heads).add_scalar(p_.kv_heads).add_scalar(p_.scale);
    for (int32_t len : p_.context_lens) args.add_scalar(static_cast<int64_t>(len));
    return Status::Ok();
  }

  Status check(GoldenStats* stats) const override {
    return compare_to_reference("paged_attention out", out_, want_, Tolerance{1e-4, 1e-3}, stats);
  }

  std::span<float> output() override { return out_; }
  uint64_t expected_tasks() const override {
    return static_cast<uint64_t>(params_.get("batch") * params_.get("kv_heads"));
  }

 private:
  pa::Problem p_;
  std::vector<double> want_;
  std::vector<float> out_;
  ChipTensor tq_, tk_, tv_, ttable_, tout_;
};

}  // namespace

std::unique_ptr<Workload> make_paged_attention_workload() { return std::make_unique<PagedAttentionWorkload>(); }

}  // namespace taskring::workloads
