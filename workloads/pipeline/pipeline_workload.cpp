// pipeline: two stages on different chips chained through a host tensor,
// double buffered. Micro-batch i: stage 1 on chip 0 writes buf[i % 2] =
// X[i] + 1; stage 2 on chip 1 reads it into Y[i] = buf + 2. Stage 1 of i+2
// reuses buf[i % 2], which stage 2 of i still reads: the write-after-read
// edge is inferred (taskring tracks WAR), so the buffer is never clobbered
// early. Golden: Y = X + 3.
#include <cstring>
#include <vector>

#include "pto_orchestration_api.h"
#include "taskring/kernels/builtin_ids.hpp"
#include "taskring/workloads/host_data.hpp"
#include "taskring/workloads/node_workload.hpp"

namespace taskring::workloads {
namespace {

using node::NodeWorker;
using node::Orchestrator;

// Chip entry: out = in + s (scalar 0, f32 bits).
void add_scalar_entry(const ChipTaskArgs& args) {
  CoreTaskArgs t;
  t.add_input(*args.tensor(0)).add_output(*args.tensor(1));
  uint64_t bits = args.scalar(0);
  t.add_scalars(&bits, 1);
  rt_submit_aiv_task(kernels::builtin_id::kAddScalar, t);
}

uint64_t f32_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

class Pipeline final : public NodeWorkload {
 public:
  Pipeline() {
    params_.add("chips", 2, 1, 64, "chip children (stage 1 on chip 0, stage 2 on chip 1 % chips)")
        .add("micro", 8, 1, 1024, "micro-batches through the pipeline")
        .add("n", 4096, 1, 1 << 20, "elements per micro-batch")
        .add("seed", 1, 0, INT32_MAX, "seed of the random inputs");
  }
  std::string_view name() const override { return "pipeline"; }
  std::string_view summary() const override {
    return "L3: two chip stages chained through a double-buffered host tensor (WAR-safe reuse)";
  }
  Status validate() const override {
    if (p("micro") * p("n") > (int64_t{1} << 26))
      return invalid_argument("pipeline: micro*n = " + std::to_string(p("micro") * p("n")) + " exceeds 2^26");
    return Status::Ok();
  }
  node::NodeConfig node_config() const override {
    node::NodeConfig c;
    c.chips = static_cast<int>(p("chips"));
    c.sub_workers = 0;
    c.heap_ring_bytes = 1 << 20;
    c.shared_bytes = static_cast<uint64_t>((2 * p("micro") + 2) * p("n") * 4) + (1 << 20);
    return c;
  }
  Status register_callables(NodeWorker& node) override {
    ChipCallable c;
    c.name = "pipeline_add";
    c.entry = add_scalar_entry;
    auto id = node.register_chip(c);
    if (!id.ok()) return id.status();
    add_ = *id;
    return Status::Ok();
  }
  Status setup(NodeWorker& node) override {
    micro_ = static_cast<uint32_t>(p("micro"));
    n_ = static_cast<uint32_t>(p("n"));
    auto alloc = [&](uint64_t floats) -> Expected<float*> {
      auto v = node.alloc_shared(floats * 4);
      if (!v.ok()) return v.status();
      return static_cast<float*>(*v);
    };
    TASKRING_ASSIGN_OR_RETURN(float* x, alloc(uint64_t{micro_} * n_));
    TASKRING_ASSIGN_OR_RETURN(float* y, alloc(uint64_t{micro_} * n_));
    TASKRING_ASSIGN_OR_RETURN(float* buf, alloc(2ull * n_));
    auto vx = uniform_floats(uint64_t{micro_} * n_, static_cast<uint64_t>(p("seed")));
    std::memcpy(x, vx.data(), vx.size() * 4);
    X_ = make_tensor_external(x, {micro_, n_});
    Y_ = make_tensor_external(y, {micro_, n_});
    Buf_ = make_tensor_external(buf, {2, n_});
    y_ = y;
    want_.resize(vx.size());
    for (size_t i = 0; i < vx.size(); ++i) want_[i] = static_cast<double>(vx[i]) + 3.0;
    return Status::Ok();
  }
  void reset_output() override { std::memset(y_, 0, want_.size() * 4); }
  node::OrchFunction orchestration() override {
    return [this](Orchestrator& o) -> Status {
      const int s1 = 0, s2 = 1 % o.chips();
      for (uint32_t i = 0; i < micro_; ++i) {
        ChipTensor xi = X_.view({1, n_}, {i, 0}), yi = Y_.view({1, n_}, {i, 0});
        ChipTensor bi = Buf_.view({1, n_}, {i % 2, 0});
        ChipTaskArgs a;
        a.add_input(xi).add_output(bi).add_scalar(f32_bits(1.0f));
        TASKRING_RETURN_IF_ERROR(o.submit_next_level(add_, a, s1));
        ChipTaskArgs b;
        b.add_input(bi).add_output(yi).add_scalar(f32_bits(2.0f));
        TASKRING_RETURN_IF_ERROR(o.submit_next_level(add_, b, s2));
      }
      return Status::Ok();
    };
  }
  Status check(GoldenStats* stats) const override {
    return compare_to_reference("pipeline Y", std::span<const float>(y_, want_.size()), want_, Tolerance{1e-6, 1e-6},
                                stats);
  }
  uint64_t expected_tasks() const override { return 2 * static_cast<uint64_t>(p("micro")); }

 private:
  int64_t p(const char* k) const { return params_.get(k); }
  int add_ = -1;
  uint32_t micro_ = 0, n_ = 0;
  ChipTensor X_, Y_, Buf_;
  float* y_ = nullptr;
  std::vector<double> want_;
};

}  // namespace

std::unique_ptr<NodeWorkload> make_pipeline_workload() { return std::make_unique<Pipeline>(); }

}  // namespace taskring::workloads
