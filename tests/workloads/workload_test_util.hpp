// Helpers for the workload tests: a sim worker with a given executor-thread
// count, and one checked round of a workload on it.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <string>
#include <utility>

#include "taskring/base/knobs.hpp"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/workloads/round.hpp"

namespace taskring::workloads::testing {

// Sets each (name, value); every one must be accepted.
inline void set_params(Workload& w, std::initializer_list<std::pair<const char*, int64_t>> values) {
  for (const auto& [name, v] : values) {
    Status s = w.params().set(name, v);
    EXPECT_TRUE(s.ok()) << s.to_string();
  }
}

inline std::unique_ptr<ChipWorker> sim_worker(int threads) {
  ChipWorkerConfig cfg;
  cfg.env = map_env({{"TASKRING_SIM_THREADS", std::to_string(threads)}});
  auto w = ChipWorker::create(cfg);
  EXPECT_TRUE(w.ok()) << w.status().to_string();
  return w.ok() ? std::move(*w) : nullptr;
}

// setup + register + `rounds` rounds; every round must run and pass.
inline void expect_rounds_pass(Workload& w, int threads, int rounds = 2) {
  ASSERT_TRUE(w.setup().ok()) << w.params().describe();
  auto worker = sim_worker(threads);
  ASSERT_NE(worker, nullptr);
  auto id = worker->register_callable(w.callable());
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  for (int r = 0; r < rounds; ++r) {
    auto res = run_round(*worker, *id, w);
    ASSERT_TRUE(res.ok()) << res.status().to_string();
    EXPECT_TRUE(res->golden.ok()) << res->golden.to_string() << " round " << r << " " << w.params().describe();
    EXPECT_EQ(res->report.stats.kernel_tasks, w.expected_tasks());
    EXPECT_EQ(res->stats.mismatches, 0u);
    EXPECT_GT(res->stats.checked, 0u);
  }
}

// One passing round, then element `index` of the output corrupted by `delta`:
// check() must fail with OUT_OF_RANGE and say so.
inline void expect_corruption_detected(Workload& w, size_t index, float delta) {
  ASSERT_TRUE(w.setup().ok());
  auto worker = sim_worker(2);
  ASSERT_NE(worker, nullptr);
  auto id = worker->register_callable(w.callable());
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  auto res = run_round(*worker, *id, w);
  ASSERT_TRUE(res.ok()) << res.status().to_string();
  ASSERT_TRUE(res->golden.ok()) << res->golden.to_string();
  ASSERT_LT(index, w.output().size());
  w.output()[index] += delta;
  GoldenStats stats;
  Status s = w.check(&stats);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(stats.mismatches, 1u);
  EXPECT_EQ(stats.worst_index, index);
  EXPECT_NE(s.message().find("1 of " + std::to_string(w.output().size()) + " elements outside tolerance"),
            std::string::npos)
      << s.message();
}

}  // namespace taskring::workloads::testing
