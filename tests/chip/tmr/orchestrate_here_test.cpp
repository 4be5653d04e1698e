// RunConfig::orchestrate_here on a threaded tmr chip (what a node's chip
// child asks for): the calling thread orchestrates, the first ready task
// wakes no executor, and a run of one task runs on the calling thread. What
// must hold: a one-task run executes on the caller; runs of zero tasks, of a
// chain (whose first task woke nobody and whose second is never pushed by the
// orchestration) and of a fan-out complete with every output right, run
// after run on one worker. Every run has the run timeout as its deadline.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "pto_orchestration_api.h"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/kernels/builtin_ids.hpp"

namespace taskring::testing {
namespace {

constexpr int32_t kWhere = 3;
constexpr uint32_t kN = 16;
std::atomic<std::thread::id> g_ran_on{};

extern "C" void where_kernel(int64_t*) { g_ran_on.store(std::this_thread::get_id()); }

// Scalar 0 tasks of where_kernel.
extern "C" void where_entry(const ChipTaskArgs& args) {
  for (uint64_t i = 0; i < args.scalar(0); ++i) {
    CoreTaskArgs a;
    rt_submit_aiv_task(kWhere, a);
  }
}

void add_one(const ChipTensor& in, const ChipTensor& out, float v) {
  CoreTaskArgs t;
  t.add_input(in).add_output(out);
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof v);
  t.add_scalars(&bits, 1);
  rt_submit_aiv_task(kernels::builtin_id::kAddScalar, t);
}

// Tensors: x, then a chain y = x + 1, z = y + 1, then w_i = x + i for the rest.
extern "C" void chain_entry(const ChipTaskArgs& args) {
  add_one(*args.tensor(0), *args.tensor(1), 1.0f);
  add_one(*args.tensor(1), *args.tensor(2), 1.0f);
  for (int32_t i = 3; i < args.tensor_count(); ++i) add_one(*args.tensor(0), *args.tensor(i), static_cast<float>(i));
}

// A threaded worker (two sim threads) with one callable, registered as id 0.
std::unique_ptr<ChipWorker> threaded_worker(const char* name, OrchestrationEntry entry,
                                            std::vector<KernelBinding> kernels = {}) {
  ChipWorkerConfig cfg;
  cfg.env = map_env({{"TASKRING_SIM_THREADS", "2"}, {"TASKRING_RUN_TIMEOUT_MS", "20000"}});
  auto w = ChipWorker::create(cfg);
  EXPECT_TRUE(w.ok()) << w.status().to_string();
  if (!w.ok()) return nullptr;
  ChipCallable c;
  c.name = name;
  c.entry = entry;
  c.kernels = std::move(kernels);
  auto id = (*w)->register_callable(c);
  EXPECT_TRUE(id.ok() && *id == 0) << id.status().to_string();
  return std::move(*w);
}

RunConfig here() {
  RunConfig rc;
  rc.orchestrate_here = true;
  return rc;
}

TEST(OrchestrateHere, ARunOfOneTaskRunsOnTheCallingThread) {
  auto w = threaded_worker("where", where_entry, {KernelBinding{kWhere, where_kernel, "", "where"}});
  ASSERT_NE(w, nullptr);
  const int id = 0;
  for (uint64_t tasks : {1u, 0u, 3u, 1u}) {
    ChipTaskArgs a;
    a.add_scalar(tasks);
    auto r = w->run(id, a, here());
    ASSERT_TRUE(r.ok()) << tasks << " tasks: " << r.status().to_string();
    EXPECT_EQ(r->stats.tasks_completed, tasks);
  }
  // Which thread runs it: the caller, once the executors have parked. An
  // executor still leaving the previous run (or at its 50 ms look) may find
  // the new run open and take the task, which is right, only slower: so the
  // runs below first give the executors time to park, and one of five
  // must have run on the caller (none does without the one-task path).
  int on_caller = 0;
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    g_ran_on.store(std::thread::id{});
    ChipTaskArgs a;
    a.add_scalar(1);
    auto r = w->run(id, a, here());
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    if (g_ran_on.load() == std::this_thread::get_id()) ++on_caller;
  }
  EXPECT_GE(on_caller, 1) << "the one task ran on an executor every time";
  // Without it, the executors run every task.
  g_ran_on.store(std::thread::id{});
  ChipTaskArgs a;
  a.add_scalar(1);
  ASSERT_TRUE(w->run(id, a).ok());
  EXPECT_NE(g_ran_on.load(), std::this_thread::get_id());
}

TEST(OrchestrateHere, AChainAndAFanOutCompleteWithTheirOutputsRunAfterRun) {
  auto w = threaded_worker("chain", chain_entry);
  ASSERT_NE(w, nullptr);
  const int id = 0;
  for (int fan : {0, 1, 8}) {
    for (int round = 0; round < 20; ++round) {
      std::vector<std::vector<float>> rows(static_cast<size_t>(3 + fan), std::vector<float>(kN, -1.0f));
      for (uint32_t k = 0; k < kN; ++k) rows[0][k] = static_cast<float>(k + round);
      std::vector<ChipTensor> t;
      for (auto& row : rows) t.push_back(make_tensor_external(row.data(), {kN}));
      ChipTaskArgs a;
      a.add_input(t[0]);
      for (size_t i = 1; i < t.size(); ++i) a.add_output(t[i]);
      auto r = w->run(id, a, here());
      ASSERT_TRUE(r.ok()) << "fan " << fan << " round " << round << ": " << r.status().to_string();
      for (uint32_t k = 0; k < kN; ++k) {
        const float x = static_cast<float>(k + round);
        ASSERT_EQ(rows[2][k], x + 2.0f) << "z[" << k << "] fan " << fan << " round " << round;
        for (size_t i = 3; i < rows.size(); ++i)
          ASSERT_EQ(rows[i][k], x + static_cast<float>(i)) << "w" << i << "[" << k << "] round " << round;
      }
    }
  }
}

}  // namespace
}  // namespace taskring::testing
