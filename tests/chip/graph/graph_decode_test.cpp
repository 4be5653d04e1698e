// The decode workload: golden with Graph on and off, on hbg and tmr, and the
// outputs bit-identical between all four.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "taskring/chip/chip_worker.hpp"
#include "taskring/workloads/decode.hpp"
#include "test_scale.hpp"

namespace {

struct Result {
  std::vector<float> out;
  taskring::RunReport report;
};

Result run_decode(const std::string& runtime, int graph, int layers) {
  auto w = taskring::workloads::make_decode_workload();
  EXPECT_TRUE(w->params().set("graph", graph).ok());
  EXPECT_TRUE(w->params().set("layers", layers).ok());
  EXPECT_TRUE(w->setup().ok());
  taskring::ChipWorkerConfig cfg;
  cfg.runtime = runtime;
  auto worker = taskring::ChipWorker::create(cfg);
  EXPECT_TRUE(worker.ok());
  auto id = (*worker)->register_callable(w->callable());
  EXPECT_TRUE(id.ok()) << id.status().to_string();
  Result r;
  for (int round = 0; round < 2; ++round) {
    taskring::ChipTaskArgs args;
    EXPECT_TRUE(w->bind_args(args).ok());
    auto rep = (*worker)->run(*id, args);
    EXPECT_TRUE(rep.ok()) << runtime << " graph=" << graph << ": " << rep.status().to_string();
    if (!rep.ok()) return r;
    taskring::Status g = w->check();
    EXPECT_TRUE(g.ok()) << runtime << " graph=" << graph << ": " << g.to_string();
    r.report = *rep;
  }
  auto out = w->output();
  r.out.assign(out.begin(), out.end());
  return r;
}

TEST(GraphDecode, GoldenAndBitIdenticalGraphOnOffOnBothRuntimes) {
  const int layers = 6;
  Result on = run_decode("hbg", 1, layers);
  Result off = run_decode("hbg", 0, layers);
  Result tmr_on = run_decode("tmr", 1, layers);
  Result tmr_off = run_decode("tmr", 0, layers);
  ASSERT_EQ(on.out.size(), off.out.size());
  ASSERT_FALSE(on.out.empty());
  EXPECT_EQ(std::memcmp(on.out.data(), off.out.data(), on.out.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(on.out.data(), tmr_on.out.data(), on.out.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(on.out.data(), tmr_off.out.data(), on.out.size() * sizeof(float)), 0);
  // Graph on: one host task per layer; second round replays without upload.
  EXPECT_EQ(on.report.stats.tasks_submitted, static_cast<uint64_t>(layers));
  EXPECT_EQ(on.report.graph.graph_tasks, static_cast<uint64_t>(layers));
  EXPECT_EQ(on.report.graph.definitions_recorded, 0u);
  EXPECT_EQ(on.report.graph.graph_upload_calls, 0u);
  EXPECT_EQ(on.report.graph.arena_h2d_calls, 1u);
  EXPECT_GT(off.report.stats.tasks_submitted, 20u * layers);
}

TEST(GraphDecode, GoldenCanFail) {
  auto w = taskring::workloads::make_decode_workload();
  ASSERT_TRUE(w->params().set("layers", 2).ok());
  ASSERT_TRUE(w->setup().ok());
  auto worker = taskring::ChipWorker::create({.runtime = "hbg"});
  ASSERT_TRUE(worker.ok());
  auto id = (*worker)->register_callable(w->callable());
  taskring::ChipTaskArgs args;
  ASSERT_TRUE(w->bind_args(args).ok());
  ASSERT_TRUE((*worker)->run(*id, args).ok());
  ASSERT_TRUE(w->check().ok());
  w->output()[3] += 0.5f;
  EXPECT_FALSE(w->check().ok());
}

}  // namespace
