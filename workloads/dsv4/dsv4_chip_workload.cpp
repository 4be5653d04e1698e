// dsv4 on one chip: all routed experts local, the whole vocabulary.
#include <algorithm>

#include "dsv4_orchestration.hpp"
#include "dsv4_params.hpp"
#include "taskring/workloads/dsv4.hpp"

namespace taskring::workloads {
namespace {

using namespace dsv4;

class Dsv4ChipWorkload final : public Workload {
 public:
  Dsv4ChipWorkload() { declare_params(params_); }
  std::string_view name() const override { return "dsv4_chip"; }
  std::string_view summary() const override {
    return "DeepSeek-V4-style decode step on one chip (low-rank attention, MoE, LM head), one Graph per layer";
  }

  Status setup() override {
    TASKRING_ASSIGN_OR_RETURN(Shape s, shape_from(params_, 1));
    p_ = make_problem(s, static_cast<uint64_t>(params_.get("seed")));
    want_ = reference_step(p_);
    x_.resize(p_.x.size());
    kc_.resize(p_.k_cache.size());
    vc_.resize(p_.v_cache.size());
    logits_.assign(static_cast<size_t>(s.batch * s.vocab), 0.0f);
    routed_.assign(p_.x.size(), 0.0f);
    const auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
    const int64_t H = s.hidden, L = s.layers, Lm = std::max<int64_t>(s.moe_layers(), 1);
    auto ext = [](const auto& v, std::initializer_list<uint32_t> shape, DataType dt = DataType::FP32) {
      return make_tensor_external(const_cast<void*>(static_cast<const void*>(v.data())), shape, dt);
    };
    t_[kX] = ext(x_, {u(s.batch), u(H)});
    t_[kAttnNorm] = ext(p_.attn_norm, {u(L), u(H)});
    t_[kQNorm] = ext(p_.q_norm, {u(L), u(s.q_rank)});
    t_[kKvNorm] = ext(p_.kv_norm, {u(L), u(s.kv_rank)});
    t_[kFfnNorm] = ext(p_.ffn_norm, {u(L), u(H)});
    t_[kWdq] = ext(p_.wdq, {u(L * H), u(s.q_rank)});
    t_[kWuq] = ext(p_.wuq, {u(L * s.q_rank), u(s.q_width())});
    t_[kWdkv] = ext(p_.wdkv, {u(L * H), u(s.kv_rank)});
    t_[kWukv] = ext(p_.wukv, {u(L * s.kv_rank), u(s.kv_width())});
    t_[kWo] = ext(p_.wo, {u(L * s.q_width()), u(H)});
    t_[kWg] = ext(p_.wg, {u(L * H), u(s.ffn)});
    t_[kWu] = ext(p_.wu, {u(L * H), u(s.ffn)});
    t_[kWd] = ext(p_.wd, {u(L * s.ffn), u(H)});
    t_[kRouter] = ext(p_.router, {u(Lm * H), u(s.experts)});
    t_[kEg] = ext(p_.eg, {u(Lm * s.experts * H), u(s.expert_ffn)});
    t_[kEu] = ext(p_.eu, {u(Lm * s.experts * H), u(s.expert_ffn)});
    t_[kEd] = ext(p_.ed, {u(Lm * s.experts * s.expert_ffn), u(H)});
    t_[kKc] = ext(kc_, {u(L * s.cache_rows_per_layer()), u(s.head_dim)});
    t_[kVc] = ext(vc_, {u(L * s.cache_rows_per_layer()), u(s.head_dim)});
    t_[kCos] = ext(p_.cos, {u(s.context + 1), u(s.head_dim / 2)});
    t_[kSin] = ext(p_.sin, {u(s.context + 1), u(s.head_dim / 2)});
    t_[kPos] = ext(p_.positions, {u(s.batch)}, DataType::INT32);
    t_[kTable] = ext(p_.block_table, {u(s.batch), u(s.max_blocks())}, DataType::INT32);
    t_[kFinalNorm] = ext(p_.final_norm, {u(H)});
    t_[kLmHead] = ext(p_.lm_head, {u(H), u(s.vocab)});
    t_[kLogits] = ext(logits_, {u(s.batch), u(s.vocab)});
    t_[kRouted] = ext(routed_, {u(s.batch), u(H)});
    return Status::Ok();
  }

  ChipCallable callable() const override { return dsv4_callable(); }

  // Weights, caches and tables into device memory once; x, the routed
  // partial and the logits stay host tensors staged per run.
  Status place_on_device(ChipWorker& worker) override {
    Device& dev = worker.device();
    for (int i = 0; i < kEntryTensors; ++i) {
      if (i == kX || i == kRouted || i == kLogits) continue;
      ChipTensor& t = t_[i];
      if (t.address_space == AddressSpace::DEVICE) continue;
      const uint64_t bytes = t.buffer.size;
      TASKRING_ASSIGN_OR_RETURN(uint64_t addr, dev.malloc(std::max<uint64_t>(bytes, 4), 1024, "dsv4 resident input"));
      // The caches are refreshed from the problem (bind_args resets the host copies).
      const void* src = i == kKc   ? p_.k_cache.data()
                        : i == kVc ? p_.v_cache.data()
                                   : reinterpret_cast<const void*>(t.buffer.addr);
      TASKRING_RETURN_IF_ERROR(dev.copy_to_device(addr, src, bytes));
      t.buffer.addr = addr;
      t.address_space = AddressSpace::DEVICE;
    }
    return Status::Ok();
  }

  Status bind_args(ChipTaskArgs& args) override {
    std::copy(p_.x.begin(), p_.x.end(), x_.begin());
    std::copy(p_.k_cache.begin(), p_.k_cache.end(), kc_.begin());
    std::copy(p_.v_cache.begin(), p_.v_cache.end(), vc_.begin());
    std::fill(logits_.begin(), logits_.end(), 0.0f);
    add_entry_args(args, t_, p_, part());
    return Status::Ok();
  }

  Status check(GoldenStats* stats) const override {
    return compare_to_reference("dsv4 logits", logits_, want_, Tolerance{5e-4, 5e-3}, stats);
  }
  std::span<float> output() override { return logits_; }
  uint64_t expected_tasks() const override { return tasks_of(p_.s, part()); }

 private:
  RunPart part() const {
    RunPart r;
    r.layer_end = p_.s.layers;
    r.graph = params_.get("graph") != 0;
    return r;
  }
  Problem p_;
  std::vector<double> want_;
  std::vector<float> x_, kc_, vc_, logits_, routed_;
  EntryTensors t_;
};

}  // namespace

std::unique_ptr<Workload> make_dsv4_chip_workload() { return std::make_unique<Dsv4ChipWorkload>(); }

}  // namespace taskring::workloads
