// TmrRuntime::orchestrator_feeding, the hint that makes idle executors poll
// less often while a threaded run's orchestration submits
// (l2::kFeedingPollPauses): true while it submits, false while it waits on
// the executors (they must then take work at once), never on inline runs.
#include <gtest/gtest.h>

#include <atomic>

#include "l2/runtime_ops.hpp"
#include "pto_orchestration_api.h"
#include "taskring/base/clock.hpp"
#include "tmr/one_callable.hpp"
#include "tmr/tmr_runtime.hpp"

namespace taskring::testing {
namespace {

constexpr int kWatch = 0;
std::atomic<tmr::TmrRuntime*> g_rt{nullptr};
std::atomic<int> g_feeding_at_entry{-1};
std::atomic<int> g_saw_waiting{-1};

tmr::TmrRuntime* bound_runtime() {
  return reinterpret_cast<l2::RuntimeBinding<tmr::TmrRuntime>*>(orch_detail::rt())->owner;
}

// Runs on an executor: waits (up to 5 s) for the orchestration to stop
// feeding, which it does only while it waits for this task's output.
extern "C" void watch_kernel(int64_t* args) {
  tmr::TmrRuntime* rt = g_rt.load();
  const uint64_t until = mono_ns() + 5'000'000'000ull;
  while (rt->orchestrator_feeding() && mono_ns() < until) {
  }
  g_saw_waiting.store(rt->orchestrator_feeding() ? 0 : 1);
  *reinterpret_cast<int32_t*>(reinterpret_cast<ChipTensor*>(args[0])->buffer.addr) = 7;
}

extern "C" void watch_entry(const ChipTaskArgs& args) {
  g_rt.store(bound_runtime());
  g_feeding_at_entry.store(g_rt.load()->orchestrator_feeding() ? 1 : 0);
  CoreTaskArgs a;
  a.add_inout(*args.tensor(0));
  rt_submit_aiv_task(kWatch, a);
  const uint32_t idx = 0;
  (void)get_tensor_data<int32_t>(*args.tensor(0), 1, &idx);  // waits for watch_kernel
}

TEST(OrchestratorFeeding, TrueWhileSubmittingFalseWhileWaitingOnTheExecutors) {
  g_rt.store(nullptr);
  g_feeding_at_entry.store(-1);
  g_saw_waiting.store(-1);
  std::vector<int32_t> x(8, 0);
  ChipTensor t = make_tensor_external(x.data(), {8}, DataType::INT32);
  ChipTaskArgs args;
  args.add_inout(t);
  auto report = run_one_callable({{"TASKRING_RUN_INLINE", "0"}, {"TASKRING_SIM_THREADS", "2"}},
                                 {kWatch, watch_kernel, "", "watch"}, watch_entry, args);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  EXPECT_EQ(x[0], 7);
  EXPECT_EQ(g_feeding_at_entry.load(), 1) << "a threaded orchestration is not marked as feeding";
  EXPECT_EQ(g_saw_waiting.load(), 1) << "the orchestration waiting in get_tensor_data still counted as feeding";
}

TEST(OrchestratorFeeding, AnInlineRunNeverFeeds) {
  g_feeding_at_entry.store(-1);
  auto report = run_one_callable({{"TASKRING_RUN_INLINE", "1"}}, {kWatch, watch_kernel, "", "watch"},
                                 [](const ChipTaskArgs&) {
                                   g_feeding_at_entry.store(bound_runtime()->orchestrator_feeding() ? 1 : 0);
                                 },
                                 {});
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  EXPECT_EQ(g_feeding_at_entry.load(), 0);
}

}  // namespace
}  // namespace taskring::testing
