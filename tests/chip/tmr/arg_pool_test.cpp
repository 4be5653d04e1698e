// The argument pools of tmr's rings (task_ring.hpp): a task's descriptors,
// scalars and retained producers live there, not in its slot. The widest
// tasks (32 tensors, 16 scalars, explicit retained producers) through
// 4-slot windows make both pools wrap hundreds of times, hot pool and cold
// pool alike; every task checks in its kernel that it sees exactly the
// arguments it was submitted with, and the run's sum proves that each ran
// once, in order. A pool that handed out units still in use, or a slot
// reading another task's units, breaks a check.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "pto_orchestration_api.h"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/kernels/kernel_abi.h"
#include "test_kernels.hpp"
#include "tmr/one_callable.hpp"

namespace taskring::testing {
namespace {

constexpr int kWide = 0;
constexpr int kInputs = CORE_MAX_TENSOR_ARGS - 1;  // plus one INOUT accumulator
constexpr int kScalars = CORE_MAX_SCALAR_ARGS;
std::atomic<int> g_bad{0};

// t0 (INOUT int64[1]) += s0 * (sum of the first element of each input,
// input k holding element k of the source) + sum of scalars 1..15; the
// kernel also checks that input k is element k and that scalar j is s0 + j.
extern "C" void arg_pool_wide(int64_t* args) {
  KernelLocalContext* ctx = taskring_kernel_local(args);
  if (ctx->tensor_count != 1 + kInputs || ctx->scalar_count != kScalars) {
    g_bad.fetch_add(1);
    return;
  }
  const int64_t* s = args + ctx->tensor_count;
  int64_t inputs = 0;
  for (int k = 1; k <= kInputs; ++k) {
    const ChipTensor& t = *arg_tensor(args, k);
    if (t.start_offset != static_cast<uint64_t>(k - 1) || t.shapes[0] != 1) g_bad.fetch_add(1);
    inputs += reinterpret_cast<const int64_t*>(static_cast<uintptr_t>(t.buffer.addr))[t.start_offset];
  }
  int64_t scalars = 0;
  for (int j = 1; j < kScalars; ++j) {
    if (s[j] != s[0] + j) g_bad.fetch_add(1);
    scalars += s[j];
  }
  const ChipTensor& acc = *arg_tensor(args, 0);
  reinterpret_cast<int64_t*>(static_cast<uintptr_t>(acc.buffer.addr))[0] += s[0] * inputs + scalars;
}

constexpr int kTasks = 600;

// Tensor 0: the accumulator (INOUT), tensor 1: the source (int64[kInputs],
// source[k] = k + 1). Each task retains the two before it.
extern "C" void arg_pool_entry(const ChipTaskArgs& args) {
  const ChipTensor& acc = *args.tensor(0);
  const ChipTensor& src = *args.tensor(1);
  std::vector<ChipTensor> element(kInputs);
  for (int k = 0; k < kInputs; ++k) {
    uint32_t shape = 1, offset = static_cast<uint32_t>(k);
    element[k] = src.view(&shape, &offset);
  }
  PTO2TaskId before[2] = {PTO2TaskId::invalid(), PTO2TaskId::invalid()};
  for (int i = 0; i < kTasks; ++i) {
    PTO2_SCOPE() {
      CoreTaskArgsWithDeps<2> a;
      a.add_inout(acc);
      for (int k = 0; k < kInputs; ++k) a.add_input(element[k]);
      for (int j = 0; j < kScalars; ++j) a.add_scalar(static_cast<uint64_t>(i + j));
      for (PTO2TaskId id : before) {
        if (id.is_valid()) a.add_dep(id);
      }
      TaskOutputTensors r = rt_submit_aiv_task(kWide, a);
      before[0] = before[1];
      before[1] = r.task_id();
    }
  }
}

int64_t expected_sum() {
  int64_t inputs = 0;
  for (int k = 0; k < kInputs; ++k) inputs += k + 1;
  int64_t sum = 0;
  for (int64_t i = 0; i < kTasks; ++i) {
    int64_t scalars = 0;
    for (int j = 1; j < kScalars; ++j) scalars += i + j;
    sum += i * inputs + scalars;
  }
  return sum;
}

void run_wide(bool inline_run) {
  g_bad.store(0);
  std::vector<int64_t> acc(1, 0), src(kInputs);
  for (int k = 0; k < kInputs; ++k) src[k] = k + 1;
  ChipTensor tacc = make_tensor_external(acc.data(), {1}, DataType::INT64);
  ChipTensor tsrc = make_tensor_external(src.data(), {static_cast<uint32_t>(kInputs)}, DataType::INT64);
  ChipTaskArgs args;
  args.add_inout(tacc).add_input(tsrc);
  auto report = run_one_callable({{"PTO2_RING_TASK_WINDOW", "4"},
                                   {"TASKRING_RUN_TIMEOUT_MS", "30000"},
                                   {"TASKRING_RUN_INLINE", inline_run ? "1" : "0"}},
                                  {kWide, arg_pool_wide, "", "wide"}, arg_pool_entry, args);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  EXPECT_EQ(g_bad.load(), 0) << "a kernel saw arguments it was not submitted with";
  EXPECT_EQ(acc[0], expected_sum());
  EXPECT_EQ(report->stats.tasks_submitted, static_cast<uint64_t>(kTasks));
}

TEST(ArgPool, WidestTasksThroughTinyWindowsSeeTheirOwnArguments) { run_wide(false); }

TEST(ArgPool, WidestTasksThroughTinyWindowsSeeTheirOwnArgumentsInline) { run_wide(true); }

}  // namespace
}  // namespace taskring::testing
