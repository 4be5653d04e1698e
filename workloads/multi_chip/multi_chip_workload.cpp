// multi_chip: C = Σ_c A_c·B_c. Chip c runs the bgemm workload's callable on
// its k-slice (A_c [batch·M, Kc], B_c [batch·Kc, N]) into row block c of the
// partials P [chips·batch·M, N]; one SUB task sums the row blocks into C.
// The SUB task reads the whole of P, so the orchestrator infers an edge from
// every chip task (RAW) without being told. Golden: a double host product.
#include <cstring>
#include <vector>

#include "taskring/workloads/bgemm.hpp"
#include "taskring/workloads/host_data.hpp"
#include "taskring/workloads/node_workload.hpp"

namespace taskring::workloads {
namespace {

using node::NodeWorker;
using node::Orchestrator;

// SUB: C[r, j] = Σ_c P[c·R + r, j]; scalar 0 = chips.
Status reduce_slices(const ChipTaskArgs& a) {
  if (a.tensor_count() != 2 || a.scalar_count() != 1) return invalid_argument("reduce_slices: expects (P, C, chips)");
  const ChipTensor& P = *a.tensor(0);
  const ChipTensor& C = *a.tensor(1);
  const uint64_t chips = a.scalar(0);
  const uint64_t n = C.numel();
  if (!P.is_contiguous || !C.is_contiguous || P.numel() != chips * n)
    return invalid_argument("reduce_slices: P must hold chips x C contiguous elements");
  const float* p = P.data<float>();
  float* c = C.data<float>();
  for (uint64_t i = 0; i < n; ++i) c[i] = p[i];
  for (uint64_t k = 1; k < chips; ++k)
    for (uint64_t i = 0; i < n; ++i) c[i] += p[k * n + i];
  return Status::Ok();
}

class MultiChip final : public NodeWorkload {
 public:
  MultiChip() {
    params_.add("chips", 2, 1, 64, "chip children (each computes one k-slice)")
        .add("batch", 1, 1, 64, "independent products per chip")
        .add("grid_m", 2, 1, 16, "C tiles along M")
        .add("grid_n", 2, 1, 16, "C tiles along N")
        .add("grid_k", 2, 1, 16, "k-splits per chip slice")
        .add("tile", 64, 1, 256, "tile edge")
        .add("seed", 1, 0, INT32_MAX, "seed of the random inputs");
  }
  std::string_view name() const override { return "multi_chip"; }
  std::string_view summary() const override {
    return "L3: every chip runs a bgemm k-slice, a SUB task sums the slices (edge inferred from the shared buffer)";
  }

  Status validate() const override {
    const int64_t rows = p("chips") * p("batch") * p("grid_m") * p("tile");
    const int64_t floats = rows * (p("grid_k") * p("tile") + 2 * p("grid_n") * p("tile")) +
                           p("chips") * p("batch") * p("grid_k") * p("tile") * p("grid_n") * p("tile");
    if (floats > (int64_t{1} << 26))
      return invalid_argument("multi_chip: the inputs and partials hold " + std::to_string(floats) +
                              " floats, more than 2^26; lower chips, batch, grid_* or tile");
    return Status::Ok();
  }

  node::NodeConfig node_config() const override {
    node::NodeConfig c;
    c.chips = static_cast<int>(p("chips"));
    c.sub_workers = 1;
    c.heap_ring_bytes = 1 << 20;
    c.shared_bytes = bytes_needed() + (1 << 20);
    return c;
  }

  Status register_callables(NodeWorker& node) override {
    auto mm = node.register_chip(make_bgemm_workload()->callable());
    if (!mm.ok()) return mm.status();
    bgemm_ = *mm;
    auto r = node.register_sub("reduce_slices", reduce_slices);
    if (!r.ok()) return r.status();
    reduce_ = *r;
    return Status::Ok();
  }

  Status setup(NodeWorker& node) override {
    chips_ = static_cast<uint32_t>(p("chips"));
    batch_ = static_cast<uint32_t>(p("batch"));
    m_ = static_cast<uint32_t>(p("grid_m") * p("tile"));
    n_ = static_cast<uint32_t>(p("grid_n") * p("tile"));
    kc_ = static_cast<uint32_t>(p("grid_k") * p("tile"));
    const uint32_t rows = batch_ * m_;  // rows of one chip's A and P slice
    auto alloc = [&](uint64_t floats) -> Expected<float*> {
      auto v = node.alloc_shared(floats * 4);
      if (!v.ok()) return v.status();
      return static_cast<float*>(*v);
    };
    TASKRING_ASSIGN_OR_RETURN(float* a, alloc(uint64_t{chips_} * rows * kc_));
    TASKRING_ASSIGN_OR_RETURN(float* b, alloc(uint64_t{chips_} * batch_ * kc_ * n_));
    TASKRING_ASSIGN_OR_RETURN(float* part, alloc(uint64_t{chips_} * rows * n_));
    TASKRING_ASSIGN_OR_RETURN(float* c, alloc(uint64_t{rows} * n_));
    const uint64_t seed = static_cast<uint64_t>(p("seed"));
    auto va = uniform_floats(uint64_t{chips_} * rows * kc_, seed * 2);
    auto vb = uniform_floats(uint64_t{chips_} * batch_ * kc_ * n_, seed * 2 + 1);
    std::memcpy(a, va.data(), va.size() * 4);
    std::memcpy(b, vb.data(), vb.size() * 4);
    A_ = make_tensor_external(a, {chips_ * rows, kc_});
    B_ = make_tensor_external(b, {chips_ * batch_ * kc_, n_});
    P_ = make_tensor_external(part, {chips_ * rows, n_});
    C_ = make_tensor_external(c, {rows, n_});
    c_ = c;
    // want[b][i][j] = Σ_chip Σ_k A_chip[b·M+i][k] · B_chip[b·Kc+k][j]
    want_.assign(uint64_t{rows} * n_, 0.0);
    for (uint32_t ch = 0; ch < chips_; ++ch)
      for (uint32_t bb = 0; bb < batch_; ++bb)
        for (uint32_t i = 0; i < m_; ++i)
          for (uint32_t k = 0; k < kc_; ++k) {
            const double aik = a[(uint64_t{ch} * rows + bb * m_ + i) * kc_ + k];
            const float* brow = b + (uint64_t{ch} * batch_ * kc_ + bb * kc_ + k) * n_;
            double* w = want_.data() + (uint64_t{bb} * m_ + i) * n_;
            for (uint32_t j = 0; j < n_; ++j) w[j] += aik * brow[j];
          }
    return Status::Ok();
  }

  void reset_output() override { std::memset(c_, 0, want_.size() * 4); }

  node::OrchFunction orchestration() override {
    return [this](Orchestrator& o) -> Status {
      const uint32_t rows = batch_ * m_;
      std::vector<ChipTensor> a(chips_), b(chips_), part(chips_);
      for (uint32_t ch = 0; ch < chips_; ++ch) {
        a[ch] = A_.view({rows, kc_}, {ch * rows, 0});
        b[ch] = B_.view({batch_ * kc_, n_}, {ch * batch_ * kc_, 0});
        part[ch] = P_.view({rows, n_}, {ch * rows, 0});
        ChipTaskArgs args;
        args.add_input(a[ch]).add_input(b[ch]).add_output(part[ch]);
        for (const char* k : {"batch", "grid_m", "grid_n", "grid_k", "tile"}) args.add_scalar(p(k));
        TASKRING_RETURN_IF_ERROR(o.submit_next_level(bgemm_, args, static_cast<int>(ch)));
      }
      ChipTaskArgs r;
      r.add_input(P_).add_output(C_).add_scalar(uint64_t{chips_});
      return o.submit_sub(reduce_, r);
    };
  }

  Status check(GoldenStats* stats) const override {
    const double tol = 1e-5 * static_cast<double>(kc_ * chips_) + 1e-4;
    return compare_to_reference("multi_chip C", std::span<const float>(c_, want_.size()), want_, Tolerance{tol, 1e-4},
                                stats);
  }

  uint64_t expected_tasks() const override { return static_cast<uint64_t>(p("chips")) + 1; }

 private:
  int64_t p(const char* k) const { return params_.get(k); }
  uint64_t bytes_needed() const {
    const uint64_t rows = p("batch") * p("grid_m") * p("tile"), n = p("grid_n") * p("tile"),
                   kc = p("grid_k") * p("tile"), ch = p("chips");
    return 4 * (ch * rows * kc + ch * p("batch") * kc * n + ch * rows * n + rows * n) + 4 * 64 * 4;
  }
  int bgemm_ = -1, reduce_ = -1;
  uint32_t chips_ = 0, batch_ = 0, m_ = 0, n_ = 0, kc_ = 0;
  ChipTensor A_, B_, P_, C_;
  float* c_ = nullptr;
  std::vector<double> want_;
};

}  // namespace

std::unique_ptr<NodeWorkload> make_multi_chip_workload() { return std::make_unique<MultiChip>(); }

}  // namespace taskring::workloads
