// dsv4 on the L3 node: EP = chips for the routed experts, TP = chips for the
// LM head.
//
// comm = 1 (default): one chip run per chip and step, as one group task over
// a comm domain: chip c decodes sequences [c·B/N, (c+1)·B/N) (attention is
// data parallel), its MoE layers dispatch every token to the chips owning
// its experts and combine the results (moe_dispatch / moe_expert_ffn /
// moe_combine, docs/comm.md), and before the LM head an allgather gives
// every chip every token's hidden state; a SUB task gathers the columns.
//
// comm = 0: the chips exchange through the host, one decoder layer per node
// step: every chip runs the layer (attention and the
// shared expert replicated, its own E/chips routed experts into a routed
// partial), then one SUB task combines: x ← x_0 + Σ_c routed_c on every
// chip's copy (the EP combine; the dispatch is implicit because every chip
// holds every token). After the last layer every chip computes its V/chips
// LM-head columns and a SUB task gathers them into [B, V]. Weights, caches
// and tables are uploaded into each chip's memory once (setup) and passed
// as device tensors; per run the chip stages only x, its routed partial
// and its logits.
#include <algorithm>
#include <cstring>

#include "dsv4_orchestration.hpp"
#include "dsv4_params.hpp"
#include "taskring/kernels/comm_kernels.hpp"
#include "taskring/node/collectives.hpp"
#include "taskring/workloads/dsv4_node.hpp"

namespace taskring::workloads {
namespace {

using namespace dsv4;
using node::NodeWorker;
using node::Orchestrator;

// SUB: X [chips·B, H] and R [chips·B, H] INOUT; scalar 0 = chips. Every
// chip's x becomes x_0 + Σ_c R_c (chip order) and R is cleared for the
// next layer.
Status combine_routed(const ChipTaskArgs& a) {
  if (a.tensor_count() != 2 || a.scalar_count() != 1) return invalid_argument("dsv4 combine: expects (X, R, chips)");
  const ChipTensor& X = *a.tensor(0);
  const ChipTensor& R = *a.tensor(1);
  const uint64_t chips = a.scalar(0);
  if (chips == 0 || !X.is_contiguous || !R.is_contiguous || X.numel() != R.numel() || X.numel() % chips != 0)
    return invalid_argument("dsv4 combine: X and R must be contiguous, equal, and split into chips rows blocks");
  const uint64_t n = X.numel() / chips;
  float* x = X.data<float>();
  float* r = R.data<float>();
  for (uint64_t i = 0; i < n; ++i) {
    float v = x[i];
    for (uint64_t c = 0; c < chips; ++c) v += r[c * n + i];
    for (uint64_t c = 0; c < chips; ++c) x[c * n + i] = v;
  }
  std::memset(r, 0, R.numel() * sizeof(float));
  return Status::Ok();
}

// SUB: P [chips·B, Vl] (chip c's columns, rows b) → logits [B, chips·Vl].
Status gather_logits(const ChipTaskArgs& a) {
  if (a.tensor_count() != 2 || a.scalar_count() != 1)
    return invalid_argument("dsv4 gather: expects (P, logits, chips)");
  const ChipTensor& P = *a.tensor(0);
  const ChipTensor& out = *a.tensor(1);
  const uint64_t chips = a.scalar(0);
  if (chips == 0 || !P.is_contiguous || !out.is_contiguous || P.numel() != out.numel() || out.ndims != 2 ||
      out.shapes[1] % chips != 0)
    return invalid_argument("dsv4 gather: P and logits must be contiguous, equal in size, logits [B, chips·Vl]");
  const uint64_t B = out.shapes[0], Vl = out.shapes[1] / chips;
  const float* p = P.data<float>();
  float* o = out.data<float>();
  for (uint64_t c = 0; c < chips; ++c)
    for (uint64_t b = 0; b < B; ++b) std::memcpy(o + b * chips * Vl + c * Vl, p + (c * B + b) * Vl, Vl * sizeof(float));
  return Status::Ok();
}

class Dsv4Node final : public Dsv4NodeWorkload {
 public:
  Dsv4Node() {
    params_.add("chips", 2, 1, 8, "chips: EP for the routed experts, TP for the LM head");
    params_.add("comm", 1, 0, 1,
                "1: MoE dispatch/combine and the LM-head gather over a comm domain, one chip run per chip and step; "
                "0: through the host, one node step per layer");
    declare_params(params_);
  }
  std::string_view name() const override { return "dsv4"; }
  std::string_view summary() const override {
    return "L3: DeepSeek-V4-style decode step, experts split over the chips (EP), LM head split (TP), one Graph "
           "per layer";
  }

  Status validate() const override {
    TASKRING_ASSIGN_OR_RETURN(Shape s, shape_from(params_, params_.get("chips")));
    if (params_.get("comm") != 0 && s.batch % s.ep != 0)
      return invalid_argument("dsv4: batch " + std::to_string(s.batch) + " is not a multiple of chips " +
                              std::to_string(s.ep) + " (with --comm 1 every chip decodes batch/chips sequences)");
    return Status::Ok();
  }

  node::NodeConfig node_config() const override {
    node::NodeConfig c;
    c.chips = static_cast<int>(params_.get("chips"));
    c.sub_workers = 1;
    c.heap_ring_bytes = 1 << 20;
    auto s = shape_from(params_, params_.get("chips"));
    const uint64_t largest = s.ok() ? largest_upload_bytes(*s) : 0;
    const uint64_t per_round = s.ok() ? 4 * uint64_t(c.chips) * s->batch * (2 * s->hidden + s->vocab) : 0;
    c.shared_bytes = largest + 2 * per_round + (4 << 20);
    return c;
  }

  Status register_callables(NodeWorker& node) override {
    TASKRING_ASSIGN_OR_RETURN(chip_callable_, node.register_chip(dsv4_callable()));
    TASKRING_ASSIGN_OR_RETURN(combine_, node.register_sub("dsv4_combine_routed", combine_routed));
    TASKRING_ASSIGN_OR_RETURN(gather_, node.register_sub("dsv4_gather_logits", gather_logits));
    return Status::Ok();
  }

  Status setup(NodeWorker& node) override {
    chips_ = params_.get("chips");
    TASKRING_ASSIGN_OR_RETURN(Shape s, shape_from(params_, chips_));
    p_ = make_problem(s, static_cast<uint64_t>(params_.get("seed")));
    want_ = reference_step(p_);
    const auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
    const uint32_t C = u(chips_), B = u(s.batch), H = u(s.hidden), Vl = u(s.local_vocab());
    auto shared = [&](uint64_t floats) -> Expected<float*> {
      TASKRING_ASSIGN_OR_RETURN(void* v, node.alloc_shared(floats * 4));
      return static_cast<float*>(v);
    };
    comm_ = params_.get("comm") != 0;
    seqs_ = comm_ ? s.batch / chips_ : s.batch;  // sequences per chip
    const uint32_t Bc = u(seqs_);
    TASKRING_ASSIGN_OR_RETURN(x_, shared(uint64_t{C} * B * H));
    TASKRING_ASSIGN_OR_RETURN(routed_, shared(uint64_t{C} * B * H));
    TASKRING_ASSIGN_OR_RETURN(parts_, shared(uint64_t{C} * B * Vl));
    TASKRING_ASSIGN_OR_RETURN(logits_, shared(uint64_t{B} * s.vocab));
    TASKRING_ASSIGN_OR_RETURN(staging_, shared(largest_upload_bytes(s) / 4 + 1));
    X_ = make_tensor_external(x_, {C * B, H});
    R_ = make_tensor_external(routed_, {C * B, H});
    P_ = make_tensor_external(parts_, {C * B, Vl});
    L_ = make_tensor_external(logits_, {B, u(s.vocab)});
    t_.assign(static_cast<size_t>(chips_), EntryTensors{});
    // One setup run uploads every chip's resident tensors.
    Status up = node.run([&](Orchestrator& o) -> Status {
      for (int64_t c = 0; c < chips_; ++c) TASKRING_RETURN_IF_ERROR(upload_chip(o, c));
      return Status::Ok();
    });
    if (!up.ok()) return up.with_context("dsv4: uploading the weights");
    for (int64_t c = 0; c < chips_; ++c) {
      EntryTensors& t = t_[static_cast<size_t>(c)];
      // Host mode: every chip a copy of every token; comm mode: chip c's
      // sequences [c·Bc, (c+1)·Bc) of one x.
      t[kX] = X_.view({Bc, H}, {u(c) * Bc, 0});
      t[kRouted] = R_.view({Bc, H}, {u(c) * Bc, 0});
      t[kLogits] = P_.view({B, Vl}, {u(c) * B, 0});
      if (comm_) {
        t[kPos] = t[kPos].view({Bc}, {u(c) * Bc});
        t[kTable] = t[kTable].view({Bc, t[kTable].shapes[1]}, {u(c) * Bc, 0});
      }
    }
    for (int64_t c = 0; c < chips_; ++c) (void)node.take_chip_run_totals(static_cast<int>(c));  // not a round's
    return Status::Ok();
  }

  void reset_output() override {
    const size_t n = p_.x.size();
    for (int64_t c = 0; c < (comm_ ? 1 : chips_); ++c) std::copy(p_.x.begin(), p_.x.end(), x_ + c * n);
    std::fill(routed_, routed_ + chips_ * n, 0.0f);
    std::fill(logits_, logits_ + want_.size(), 0.0f);
  }

  node::OrchFunction orchestration() override {
    if (comm_) return [this](Orchestrator& o) { return orchestrate_over_comm(o); };
    return [this](Orchestrator& o) -> Status {
      const Shape& s = p_.s;
      for (int64_t l = 0; l <= s.layers; ++l) {
        const bool head = l == s.layers;
        for (int64_t c = 0; c < chips_; ++c) {
          RunPart part;
          part.layer_begin = head ? s.layers : l;
          part.layer_end = head ? s.layers : l + 1;
          part.head = head;
          part.mode = kPartial;
          part.graph = params_.get("graph") != 0;
          part.chip = c;
          ChipTaskArgs a;  // the engine copies the arguments at submit
          add_entry_args(a, t_[static_cast<size_t>(c)], p_, part);
          TASKRING_RETURN_IF_ERROR(o.submit_next_level(chip_callable_, a, static_cast<int>(c)));
        }
        ChipTaskArgs sub;
        if (head)
          sub.add_input(P_).add_output(L_).add_scalar(uint64_t(chips_));
        else
          sub.add_inout(X_).add_inout(R_).add_scalar(uint64_t(chips_));
        TASKRING_RETURN_IF_ERROR(o.submit_sub(head ? gather_ : combine_, sub));
      }
      return Status::Ok();
    };
  }

  Status check(GoldenStats* stats) const override {
    return compare_to_reference("dsv4 logits", std::span<const float>(logits_, want_.size()), want_,
                                Tolerance{5e-4, 5e-3}, stats);
  }

  uint64_t expected_tasks() const override {
    if (params_.get("comm") != 0) return 2;  // one group task (every chip), one SUB gather
    return static_cast<uint64_t>((params_.get("chips") + 1) * (layers() + 1));
  }
  std::span<const float> logits() const override { return {logits_, logits_ ? want_.size() : 0}; }
  uint64_t chip_runs_per_round() const override {
    return params_.get("comm") != 0 ? 1 : static_cast<uint64_t>(layers() + 1);
  }

 private:
  int64_t layers() const {
    auto s = shape_from(params_, params_.get("chips"));
    return s.ok() ? s->layers : 0;
  }

  // The host vectors chip c keeps in its memory, with their shapes.
  struct Resident {
    int slot;
    std::vector<float> owned;        // a per-chip slice (experts, LM head)
    const std::vector<float>* data;  // or a shared vector
    std::vector<uint32_t> shape;
    DataType dtype = DataType::FP32;
  };
  std::vector<Resident> residents(int64_t c) const {
    const Shape& s = p_.s;
    const auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
    const int64_t L = s.layers, H = s.hidden, Lm = std::max<int64_t>(s.moe_layers(), 1), El = s.local_experts();
    const uint32_t rows = u(L * s.cache_rows_per_layer()), D = u(s.head_dim);
    std::vector<Resident> r;
    auto shared = [&](int slot, const std::vector<float>& v, std::vector<uint32_t> shape) {
      r.push_back(Resident{slot, {}, &v, std::move(shape)});
    };
    auto owned = [&](int slot, std::vector<float> v, std::vector<uint32_t> shape) {
      r.push_back(Resident{slot, std::move(v), nullptr, std::move(shape)});
    };
    shared(kAttnNorm, p_.attn_norm, {u(L), u(H)});
    shared(kQNorm, p_.q_norm, {u(L), u(s.q_rank)});
    shared(kKvNorm, p_.kv_norm, {u(L), u(s.kv_rank)});
    shared(kFfnNorm, p_.ffn_norm, {u(L), u(H)});
    shared(kWdq, p_.wdq, {u(L * H), u(s.q_rank)});
    shared(kWuq, p_.wuq, {u(L * s.q_rank), u(s.q_width())});
    shared(kWdkv, p_.wdkv, {u(L * H), u(s.kv_rank)});
    shared(kWukv, p_.wukv, {u(L * s.kv_rank), u(s.kv_width())});
    shared(kWo, p_.wo, {u(L * s.q_width()), u(H)});
    shared(kWg, p_.wg, {u(L * H), u(s.ffn)});
    shared(kWu, p_.wu, {u(L * H), u(s.ffn)});
    shared(kWd, p_.wd, {u(L * s.ffn), u(H)});
    shared(kRouter, p_.router, {u(Lm * H), u(s.experts)});
    owned(kEg, expert_slice(p_, p_.eg, H, s.expert_ffn, c), {u(Lm * El * H), u(s.expert_ffn)});
    owned(kEu, expert_slice(p_, p_.eu, H, s.expert_ffn, c), {u(Lm * El * H), u(s.expert_ffn)});
    owned(kEd, expert_slice(p_, p_.ed, s.expert_ffn, H, c), {u(Lm * El * s.expert_ffn), u(H)});
    shared(kKc, p_.k_cache, {rows, D});
    shared(kVc, p_.v_cache, {rows, D});
    shared(kCos, p_.cos, {u(s.context + 1), u(s.head_dim / 2)});
    shared(kSin, p_.sin, {u(s.context + 1), u(s.head_dim / 2)});
    shared(kFinalNorm, p_.final_norm, {u(H)});
    owned(kLmHead, lm_head_slice(p_, c), {u(H), u(s.local_vocab())});
    return r;
  }

  uint64_t largest_upload_bytes(const Shape& s) const {
    const int64_t L = s.layers, H = s.hidden, Lm = std::max<int64_t>(s.moe_layers(), 1);
    const int64_t sizes[] = {L * H * std::max({s.q_rank, s.kv_rank, s.ffn}),
                             L * s.q_rank * s.q_width(),
                             L * s.kv_rank * s.kv_width(),
                             L * s.q_width() * H,
                             L * s.ffn * H,
                             Lm * H * s.experts,
                             Lm * s.local_experts() * H * s.expert_ffn,
                             L * s.cache_rows_per_layer() * s.head_dim,
                             H * s.local_vocab(),
                             s.batch * s.max_blocks(),
                             (s.context + 1) * s.head_dim};
    return 4 * static_cast<uint64_t>(*std::max_element(std::begin(sizes), std::end(sizes)));
  }

  // Copies through the shared staging buffer (control copies read the shared heap).
  Expected<ChipTensor> upload(Orchestrator& o, int64_t c, const void* data, uint64_t bytes,
                              std::span<const uint32_t> shape, DataType dtype) {
    TASKRING_ASSIGN_OR_RETURN(uint64_t dev, o.malloc(static_cast<int>(c), std::max<uint64_t>(bytes, 4)));
    std::memcpy(staging_, data, bytes);
    TASKRING_RETURN_IF_ERROR(o.copy_to(static_cast<int>(c), dev, staging_, bytes));
    return try_make_tensor(dev, bytes, shape, dtype, false, 0, AddressSpace::DEVICE);
  }

  Status upload_chip(Orchestrator& o, int64_t c) {
    EntryTensors& t = t_[static_cast<size_t>(c)];
    for (const Resident& r : residents(c)) {
      const std::vector<float>& v = r.data ? *r.data : r.owned;
      TASKRING_ASSIGN_OR_RETURN(t[r.slot], upload(o, c, v.data(), v.size() * 4, r.shape, r.dtype));
    }
    const auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
    const uint32_t pos_shape[] = {u(p_.s.batch)}, table_shape[] = {u(p_.s.batch), u(p_.s.max_blocks())};
    TASKRING_ASSIGN_OR_RETURN(t[kPos],
                              upload(o, c, p_.positions.data(), p_.positions.size() * 4, pos_shape, DataType::INT32));
    TASKRING_ASSIGN_OR_RETURN(
        t[kTable], upload(o, c, p_.block_table.data(), p_.block_table.size() * 4, table_shape, DataType::INT32));
    return Status::Ok();
  }

  // One step with the chips exchanging over a comm domain: one group task
  // (the whole step on every chip, its sequences, its experts, its LM-head
  // columns), then the SUB gather of the logits.
  Status orchestrate_over_comm(Orchestrator& o) {
    const Shape& s = p_.s;
    node::MoeShape ms;
    ms.tokens = static_cast<uint32_t>(seqs_);
    ms.hidden = static_cast<uint32_t>(s.hidden);
    ms.experts = static_cast<uint32_t>(s.experts);
    ms.topk = static_cast<uint32_t>(s.topk);
    ms.ffn = static_cast<uint32_t>(s.expert_ffn);
    const int n = static_cast<int>(chips_);
    std::vector<node::DomainBufferSpec> bufs = node::moe_window_buffers(ms, n);
    for (node::DomainBufferSpec& b : bufs)
      if (b.name == "moe_recv_x") b.bytes = ms.staging_rows(n) * ms.hidden * 4;  // the rows travel in FP32
    bufs.push_back({"dsv4_gather", kernels::collective_scratch_bytes(kernels::CollectiveOp::kAllgather,
                                                                     uint64_t(seqs_ * s.hidden), 4, n)});
    uint64_t window = 0;
    for (const node::DomainBufferSpec& b : bufs) window += (b.bytes + 63) / 64 * 64;
    std::vector<int> chips(static_cast<size_t>(n));
    for (int c = 0; c < n; ++c) chips[static_cast<size_t>(c)] = c;
    TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_domain("dsv4", chips, window, bufs));
    RunPart::Comm comm;
    TASKRING_ASSIGN_OR_RETURN(comm.counts, d->buffer_offset("moe_counts"));
    TASKRING_ASSIGN_OR_RETURN(comm.recv_x, d->buffer_offset("moe_recv_x"));
    TASKRING_ASSIGN_OR_RETURN(comm.recv_w, d->buffer_offset("moe_recv_w"));
    TASKRING_ASSIGN_OR_RETURN(comm.recv_meta, d->buffer_offset("moe_recv_meta"));
    TASKRING_ASSIGN_OR_RETURN(comm.ret, d->buffer_offset("moe_ret"));
    TASKRING_ASSIGN_OR_RETURN(comm.gather, d->buffer_offset("dsv4_gather"));
    comm.capacity = ms.cap(n);
    std::vector<ChipTaskArgs> args(static_cast<size_t>(n));
    std::vector<const ChipTaskArgs*> ptrs;
    for (int c = 0; c < n; ++c) {
      TASKRING_ASSIGN_OR_RETURN(const node::DomainMember m, d->member(c));
      RunPart part;
      part.layer_end = s.layers;
      part.mode = kEp;
      part.graph = params_.get("graph") != 0;
      part.chip = c;
      part.seq_begin = c * seqs_;
      part.seq_count = seqs_;
      part.comm = comm;
      part.comm.ctx = m.device_ctx;
      add_entry_args(args[static_cast<size_t>(c)], t_[static_cast<size_t>(c)], p_, part);
      ptrs.push_back(&args[static_cast<size_t>(c)]);
    }
    TASKRING_RETURN_IF_ERROR(o.submit_next_level_group(chip_callable_, ptrs, chips));
    ChipTaskArgs sub;
    sub.add_input(P_).add_output(L_).add_scalar(uint64_t(chips_));
    return o.submit_sub(gather_, sub);
  }

  bool comm_ = false;
  int64_t seqs_ = 0;
  int64_t chips_ = 0;
  int chip_callable_ = -1, combine_ = -1, gather_ = -1;
  Problem p_;
  std::vector<double> want_;
  float *x_ = nullptr, *routed_ = nullptr, *parts_ = nullptr, *logits_ = nullptr, *staging_ = nullptr;
  ChipTensor X_, R_, P_, L_;
  std::vector<EntryTensors> t_;
};

}  // namespace

std::unique_ptr<Dsv4NodeWorkload> make_dsv4_node() { return std::make_unique<Dsv4Node>(); }
std::unique_ptr<NodeWorkload> make_dsv4_node_workload() { return make_dsv4_node(); }

}  // namespace taskring::workloads
