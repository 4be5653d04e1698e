// The five-task vector example on the built-in add / add_scalar / mul kernels.
#include <algorithm>
#include <vector>

#include "pto_orchestration_api.h"
#include "taskring/kernels/builtin_ids.hpp"
#include "taskring/workloads/vector.hpp"

namespace taskring::workloads {
namespace {

namespace bid = kernels::builtin_id;

PTO2OrchestrationConfig vector_config(const ChipTaskArgs&) { return PTO2OrchestrationConfig{3}; }

// Entry arguments: [INPUT a, INPUT b, OUTPUT_EXISTING f], all [size] FP32.
// c, d, e and g are runtime-allocated; their only edges are creator edges.
void vector_entry(const ChipTaskArgs& args) {
  const ChipTensor& a = *args.tensor(0);
  const ChipTensor& b = *args.tensor(1);
  const ChipTensor& f = *args.tensor(2);
  TensorCreateInfo ci(f.shapes, f.ndims, DataType::FLOAT32);
  CoreTaskArgs t0;
  t0.add_input(a).add_input(b).add_output(ci);
  TaskOutputTensors c = rt_submit_aiv_task(bid::kAdd, t0);
  PTO2_SCOPE() {
    CoreTaskArgs t1;
    t1.add_input(c.get_ref(0)).add_output(ci).add_scalar(1.0f);
    TaskOutputTensors d = rt_submit_aiv_task(bid::kAddScalar, t1);
    CoreTaskArgs t2;
    t2.add_input(c.get_ref(0)).add_output(ci).add_scalar(2.0f);
    TaskOutputTensors e = rt_submit_aiv_task(bid::kAddScalar, t2);
    CoreTaskArgs t3;
    t3.add_input(d.get_ref(0)).add_input(e.get_ref(0)).add_output(ci);
    TaskOutputTensors g = rt_submit_aiv_task(bid::kMul, t3);
    CoreTaskArgs t4;
    t4.add_input(g.get_ref(0)).add_input(c.get_ref(0)).add_output(f);
    rt_submit_aiv_task(bid::kAdd, t4);
  }
}

class VectorWorkload final : public Workload {
 public:
  VectorWorkload() { params_.add("size", 16384, 1, 1 << 22, "elements per tensor"); }

  std::string_view name() const override { return "vector"; }
  std::string_view summary() const override { return "five-task example c=a+b; d=c+1; e=c+2; g=d*e; f=g+c (= 47)"; }

  Status setup() override {
    const size_t n = static_cast<size_t>(params_.get("size"));
    a_.assign(n, 2.0f);
    b_.assign(n, 3.0f);
    f_.assign(n, 0.0f);
    want_.assign(n, 47.0);
    const uint32_t shape[1] = {static_cast<uint32_t>(n)};
    ta_ = make_tensor_external(a_.data(), shape, 1);
    tb_ = make_tensor_external(b_.data(), shape, 1);
    tf_ = make_tensor_external(f_.data(), shape, 1);
    return Status::Ok();
  }

  ChipCallable callable() const override {
    ChipCallable c;
    c.name = "vector";
    c.entry = vector_entry;
    c.config = vector_config;
    return c;
  }

  Status bind_args(ChipTaskArgs& args) override {
    std::fill(f_.begin(), f_.end(), 0.0f);
    args.add_input(ta_).add_input(tb_).add_output(tf_);
    return Status::Ok();
  }

  Status check(GoldenStats* stats) const override {
    return compare_to_reference("vector f", f_, want_, Tolerance{0.0, 0.0}, stats);
  }

  std::span<float> output() override { return f_; }
  uint64_t expected_tasks() const override { return 5; }

 private:
  std::vector<float> a_, b_, f_;
  std::vector<double> want_;
  ChipTensor ta_, tb_, tf_;
};

}  // namespace

std::unique_ptr<Workload> make_vector_workload() { return std::make_unique<VectorWorkload>(); }

}  // namespace taskring::workloads
