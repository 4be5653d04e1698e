// The five-task vector example: c=a+b; d=c+1; e=c+2; g=d*e; f=g+c.
#include <gtest/gtest.h>

#include <vector>

#include "pto_orchestration_api.h"
#include "taskring/chip/chip_worker.hpp"
#include "test_kernels.hpp"

namespace {

constexpr int kAdd = 0, kAddScalar = 1, kMul = 2;
constexpr uint32_t kRows = 128, kCols = 128;

extern "C" PTO2OrchestrationConfig vector_config(const ChipTaskArgs&) { return PTO2OrchestrationConfig{3}; }

extern "C" void vector_entry(const ChipTaskArgs& args) {
  const ChipTensor& a = *args.tensor(0);
  const ChipTensor& b = *args.tensor(1);
  const ChipTensor& f = *args.tensor(2);
  TensorCreateInfo ci({kRows, kCols}, DataType::FLOAT32);
  CoreTaskArgs t0;
  t0.add_input(a).add_input(b).add_output(ci);
  TaskOutputTensors r0 = rt_submit_aiv_task(kAdd, t0);
  const ChipTensor& c = r0.get_ref(0);
  PTO2_SCOPE() {
    CoreTaskArgs t1;
    t1.add_input(c).add_output(ci).add_scalar(1.0f);
    TaskOutputTensors r1 = rt_submit_aiv_task(kAddScalar, t1);
    CoreTaskArgs t2;
    t2.add_input(c).add_output(ci).add_scalar(2.0f);
    TaskOutputTensors r2 = rt_submit_aiv_task(kAddScalar, t2);
    CoreTaskArgs t3;
    t3.add_input(r1.get_ref(0)).add_input(r2.get_ref(0)).add_output(ci);
    TaskOutputTensors r3 = rt_submit_aiv_task(kMul, t3);
    CoreTaskArgs t4;
    t4.add_input(r3.get_ref(0)).add_input(c).add_output(f);
    rt_submit_aiv_task(kAdd, t4);
  }
}

taskring::ChipCallable vector_callable() {
  taskring::ChipCallable c;
  c.name = "vector_example";
  c.entry = vector_entry;
  c.config = vector_config;
  c.kernels = {{kAdd, taskring::testing::test_add, "", "add"},
               {kAddScalar, taskring::testing::test_add_scalar, "", "add_scalar"},
               {kMul, taskring::testing::test_mul, "", "mul"}};
  return c;
}

TEST(VectorExample, EveryElementIs47) {
  auto w = taskring::ChipWorker::create({});
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  auto id = (*w)->register_callable(vector_callable());
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  std::vector<float> a(kRows * kCols, 2.0f), b(kRows * kCols, 3.0f), f(kRows * kCols, 0.0f);
  for (int round = 0; round < 3; ++round) {
    std::fill(f.begin(), f.end(), 0.0f);
    ChipTensor ta = make_tensor_external(a.data(), {kRows, kCols});
    ChipTensor tb = make_tensor_external(b.data(), {kRows, kCols});
    ChipTensor tf = make_tensor_external(f.data(), {kRows, kCols});
    ChipTaskArgs args;
    args.add_input(ta).add_input(tb).add_output(tf);
    auto report = (*w)->run(*id, args);
    ASSERT_TRUE(report.ok()) << report.status().to_string();
    for (size_t i = 0; i < f.size(); ++i) ASSERT_EQ(f[i], 47.0f) << "element " << i << " round " << round;
    EXPECT_EQ(report->stats.tasks_submitted, 5u);
    EXPECT_EQ(report->stats.tasks_completed, 5u);
    EXPECT_EQ(report->h2d_calls, 2u);
    EXPECT_EQ(report->d2h_calls, 1u);
  }
}

// Staging buffers are reused run to run (same sizes): after the first run no
// device allocation happens, and the previous round's contents never leak
// into a result (the inputs change every round).
TEST(VectorExample, StagingBuffersAreReusedAcrossRuns) {
  auto w = taskring::ChipWorker::create({});
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  auto id = (*w)->register_callable(vector_callable());
  ASSERT_TRUE(id.ok());
  std::vector<float> a(kRows * kCols), b(kRows * kCols), f(kRows * kCols);
  uint64_t allocs_after_first = 0;
  for (int round = 0; round < 4; ++round) {
    std::fill(a.begin(), a.end(), 2.0f + round);
    std::fill(b.begin(), b.end(), 3.0f);
    std::fill(f.begin(), f.end(), -1.0f);
    const ChipTensor ta = make_tensor_external(a.data(), {kRows, kCols});
    const ChipTensor tb = make_tensor_external(b.data(), {kRows, kCols});
    const ChipTensor tf = make_tensor_external(f.data(), {kRows, kCols});
    ChipTaskArgs args;
    args.add_input(ta).add_input(tb).add_output(tf);
    auto report = (*w)->run(*id, args);
    ASSERT_TRUE(report.ok()) << report.status().to_string();
    // c = a + b; f = (c+1)(c+2) + c.
    const float c = 5.0f + round;
    for (size_t i = 0; i < f.size(); ++i) ASSERT_EQ(f[i], (c + 1) * (c + 2) + c) << "round " << round;
    const uint64_t allocs = (*w)->device().counters().alloc_calls;
    if (round == 0)
      allocs_after_first = allocs;
    else
      EXPECT_EQ(allocs, allocs_after_first) << "round " << round << " allocated staging again";
  }
}

TEST(VectorExample, TooFewArgumentsIsAnError) {
  auto w = taskring::ChipWorker::create({});
  ASSERT_TRUE(w.ok());
  auto id = (*w)->register_callable(vector_callable());
  ASSERT_TRUE(id.ok());
  std::vector<float> a(16, 1.0f);
  ChipTensor ta = make_tensor_external(a.data(), {16});
  ChipTaskArgs args;
  args.add_input(ta);
  auto report = (*w)->run(*id, args);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("expects 3 arguments"), std::string::npos) << report.status().to_string();
}

}  // namespace
