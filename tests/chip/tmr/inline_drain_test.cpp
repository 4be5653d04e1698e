// When the tasks of a one-thread tmr run execute: each task records how
// many tasks the orchestration had submitted when it ran. Inline, a task
// runs at its own submit when that submit finds it ready, which in a serial
// run is every task (RuntimeBase::run_now); what a completion sends to the
// queues runs at the end of a scope once enough tasks are live
// (TmrRuntime::kInlineDrainLive), not after the whole window has filled. A
// threaded run drains the same way when its executors fall that far behind.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "pto_orchestration_api.h"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/base/clock.hpp"
#include "taskring/kernels/kernel_abi.h"
#include "tmr/one_callable.hpp"
#include "tmr/tmr_runtime.hpp"

namespace taskring::testing {
namespace {

constexpr int kRecord = 0;
constexpr int kScopes = 6;
constexpr int kPerScope = static_cast<int>(tmr::TmrRuntime::kInlineDrainLive);
std::atomic<int> g_submitted{0};
std::vector<int> g_seen;  // inline: one thread runs everything

extern "C" void drain_record(int64_t*) { g_seen.push_back(g_submitted.load()); }

extern "C" void drain_entry(const ChipTaskArgs&) {
  for (int s = 0; s < kScopes; ++s) {
    PTO2_SCOPE() {
      for (int i = 0; i < kPerScope; ++i) {
        g_submitted.fetch_add(1);
        CoreTaskArgs a;
        rt_submit_aiv_task(kRecord, a);
      }
    }
  }
}

TEST(InlineDrain, TasksOfAScopeRunBeforeTheOrchestrationIsTwoScopesFurther) {
  g_submitted.store(0);
  g_seen.clear();
  auto report =
      run_one_callable({{"TASKRING_RUN_INLINE", "1"}}, {kRecord, drain_record, "", "record"}, drain_entry, {});
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  ASSERT_EQ(g_seen.size(), static_cast<size_t>(kScopes * kPerScope));
  // Tasks of one scope have no dependencies among them, so they run in
  // submission order: the j-th task run belongs to scope j / kPerScope.
  for (size_t j = 0; j < g_seen.size(); ++j) {
    const int scope = static_cast<int>(j) / kPerScope;
    ASSERT_LE(g_seen[j], (scope + 2) * kPerScope)
        << "task " << j << " (scope " << scope << ") ran after " << g_seen[j] << " submits";
  }
}

// A chain (INOUT on one tensor, each task depends on the one before) and
// independent tasks alike: task j runs inside submit j, and the chain's sum
// is right.
extern "C" void at_submit_record(int64_t* args) {
  g_seen.push_back(g_submitted.load());
  if (taskring_kernel_local(args)->tensor_count == 1) {
    ++*reinterpret_cast<int32_t*>(reinterpret_cast<ChipTensor*>(args[0])->buffer.addr);
  }
}

extern "C" void at_submit_entry(const ChipTaskArgs& args) {
  PTO2_SCOPE() {
    for (int i = 0; i < 100; ++i) {
      g_submitted.fetch_add(1);
      CoreTaskArgs a;
      if (i % 2 == 0) a.add_inout(*args.tensor(0));
      rt_submit_aiv_task(kRecord, a);
    }
  }
}

TEST(InlineDrain, AnInlineRunExecutesEachTaskAtItsOwnSubmit) {
  g_submitted.store(0);
  g_seen.clear();
  std::vector<int32_t> acc(8, 0);
  ChipTensor tensor = make_tensor_external(acc.data(), {8}, DataType::INT32);
  ChipTaskArgs args;
  args.add_inout(tensor);
  auto report = run_one_callable({{"TASKRING_RUN_INLINE", "1"}}, {kRecord, at_submit_record, "", "record"},
                                 at_submit_entry, args);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  ASSERT_EQ(g_seen.size(), 100u);
  for (size_t j = 0; j < g_seen.size(); ++j) {
    ASSERT_EQ(g_seen[j], static_cast<int>(j) + 1) << "task " << j << " ran after submit " << g_seen[j];
  }
  EXPECT_EQ(acc[0], 50);
}

// A threaded run whose executor falls behind: the orchestrating thread runs
// ready tasks beside it at the end of a scope with kInlineDrainLive or more
// tasks live, and every task still runs exactly once.
std::atomic<int> g_on_orchestrator{0}, g_ran{0};
thread_local bool t_orchestrating = false;

extern "C" void drain_slow(int64_t*) {
  g_ran.fetch_add(1);
  if (t_orchestrating) g_on_orchestrator.fetch_add(1);
  const uint64_t until = mono_ns() + 200'000;  // 200 us: the executor falls behind
  while (mono_ns() < until) {
  }
}

extern "C" void drain_threaded_entry(const ChipTaskArgs&) {
  t_orchestrating = true;
  for (int s = 0; s < 2; ++s) {
    PTO2_SCOPE() {
      for (int i = 0; i < kPerScope + 44; ++i) {
        CoreTaskArgs a;
        rt_submit_aiv_task(kRecord, a);
      }
    }
  }
  t_orchestrating = false;
}

TEST(InlineDrain, AnOrchestratorAheadOfItsExecutorsRunsReadyTasksBesideThem) {
  g_on_orchestrator.store(0);
  g_ran.store(0);
  auto report = run_one_callable({{"TASKRING_SIM_THREADS", "1"}, {"TASKRING_RUN_TIMEOUT_MS", "60000"}},
                                 {kRecord, drain_slow, "", "slow"}, drain_threaded_entry, {});
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  EXPECT_EQ(g_ran.load(), 2 * (kPerScope + 44));
  EXPECT_GT(g_on_orchestrator.load(), 0) << "the orchestrating thread ran no task";
}

}  // namespace
}  // namespace taskring::testing
