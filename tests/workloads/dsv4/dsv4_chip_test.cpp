// dsv4 on one chip: the golden with Graph on and off on hbg and tmr, the
// four outputs bit-identical, the Graph counters of the Graph form, a
// corrupted output failing the golden, and bad parameters rejected by name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "taskring/base/knobs.hpp"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/workloads/dsv4.hpp"
#include "test_scale.hpp"

namespace taskring::workloads {
namespace {

struct Result {
  std::vector<float> logits;
  RunReport report;
  uint64_t expected_tasks = 0;
};

Result run_dsv4(const std::string& runtime, int graph, int rounds = 2) {
  auto w = make_dsv4_chip_workload();
  EXPECT_TRUE(w->params().set("graph", graph).ok());
  Status s = w->setup();
  EXPECT_TRUE(s.ok()) << s.to_string();
  ChipWorkerConfig cfg;
  cfg.runtime = runtime;
  auto worker = ChipWorker::create(cfg);
  EXPECT_TRUE(worker.ok()) << worker.status().to_string();
  Result r;
  if (!worker.ok() || !s.ok()) return r;
  auto id = (*worker)->register_callable(w->callable());
  EXPECT_TRUE(id.ok()) << id.status().to_string();
  for (int round = 0; round < rounds; ++round) {
    ChipTaskArgs args;
    EXPECT_TRUE(w->bind_args(args).ok());
    auto rep = (*worker)->run(*id, args);
    EXPECT_TRUE(rep.ok()) << runtime << " graph=" << graph << ": " << rep.status().to_string();
    if (!rep.ok()) return r;
    Status g = w->check();
    EXPECT_TRUE(g.ok()) << runtime << " graph=" << graph << " round " << round << ": " << g.to_string();
    r.report = *rep;
  }
  auto out = w->output();
  r.logits.assign(out.begin(), out.end());
  r.expected_tasks = w->expected_tasks();
  return r;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && !a.empty() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(Dsv4Chip, GoldenAndBitIdenticalGraphOnOffOnBothRuntimes) {
  Result on = run_dsv4("hbg", 1);
  Result off = run_dsv4("hbg", 0);
  Result tmr_on = run_dsv4("tmr", 1);
  Result tmr_off = run_dsv4("tmr", 0);
  EXPECT_TRUE(same_bits(on.logits, off.logits));
  EXPECT_TRUE(same_bits(on.logits, tmr_on.logits));
  EXPECT_TRUE(same_bits(on.logits, tmr_off.logits));
  // Graph on (defaults: 4 layers, 1 dense): one host task per layer plus the
  // two of the head; the second round records nothing.
  EXPECT_EQ(on.report.graph.graph_tasks, 4u);
  EXPECT_EQ(on.report.graph.host_tasks, 4u + 2u);
  EXPECT_EQ(on.report.graph.definitions_used, 2u);  // dense and MoE layer
  EXPECT_EQ(on.report.graph.definitions_recorded, 0u);
  EXPECT_EQ(on.report.graph.fallbacks, 0u);
  EXPECT_EQ(on.report.graph.arena_h2d_calls, 1u);  // every submission image in one copy
  EXPECT_EQ(off.report.graph.graph_tasks, 0u);
  EXPECT_EQ(off.report.stats.kernel_tasks, off.expected_tasks);
  EXPECT_EQ(tmr_on.report.stats.kernel_tasks, tmr_on.expected_tasks);
}

// Weights resident in device memory: the same logits, bit for bit, with only
// x, the routed partial and the logits staged per run.
TEST(Dsv4Chip, PlaceOnDeviceKeepsTheOutputAndStagesLess) {
  Result host = run_dsv4("hbg", 1, 1);
  auto w = make_dsv4_chip_workload();
  ASSERT_TRUE(w->setup().ok());
  ChipWorkerConfig cfg;
  cfg.runtime = "hbg";
  auto worker = ChipWorker::create(cfg);
  ASSERT_TRUE(worker.ok());
  auto id = (*worker)->register_callable(w->callable());
  ASSERT_TRUE(id.ok());
  Status placed = w->place_on_device(**worker);
  ASSERT_TRUE(placed.ok()) << placed.to_string();
  for (int round = 0; round < 2; ++round) {
    ChipTaskArgs args;
    ASSERT_TRUE(w->bind_args(args).ok());
    auto rep = (*worker)->run(*id, args);
    ASSERT_TRUE(rep.ok()) << rep.status().to_string();
    Status g = w->check();
    EXPECT_TRUE(g.ok()) << g.to_string();
    EXPECT_LT(rep->h2d_bytes, host.report.h2d_bytes / 10);
  }
  auto out = w->output();
  EXPECT_TRUE(same_bits(std::vector<float>(out.begin(), out.end()), host.logits));
}

TEST(Dsv4Chip, GoldenCanFail) {
  auto w = make_dsv4_chip_workload();
  ASSERT_TRUE(w->params().set("layers", 2).ok());
  ASSERT_TRUE(w->setup().ok());
  auto worker = ChipWorker::create(ChipWorkerConfig{});
  ASSERT_TRUE(worker.ok());
  auto id = (*worker)->register_callable(w->callable());
  ASSERT_TRUE(id.ok());
  ChipTaskArgs args;
  ASSERT_TRUE(w->bind_args(args).ok());
  ASSERT_TRUE((*worker)->run(*id, args).ok());
  ASSERT_TRUE(w->check().ok());
  w->output()[3] += 0.5f;
  GoldenStats g;
  Status s = w->check(&g);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(g.mismatches, 1u);
  EXPECT_EQ(g.worst_index, 3u);
}

// TASKRING_SKIP_DEVICE_RUN on hbg: the entry runs (host tasks, Definitions
// recorded, uploads) but no task executes, so the logits stay as bound.
TEST(Dsv4Chip, SkipDeviceRunRunsTheHostHalfOnly) {
  auto w = make_dsv4_chip_workload();
  ASSERT_TRUE(w->setup().ok());
  ChipWorkerConfig cfg;
  cfg.runtime = "hbg";
  cfg.env = map_env({{"TASKRING_SKIP_DEVICE_RUN", "1"}});
  auto worker = ChipWorker::create(cfg);
  ASSERT_TRUE(worker.ok()) << worker.status().to_string();
  auto id = (*worker)->register_callable(w->callable());
  ASSERT_TRUE(id.ok());
  ChipTaskArgs args;
  ASSERT_TRUE(w->bind_args(args).ok());
  auto rep = (*worker)->run(*id, args);
  ASSERT_TRUE(rep.ok()) << rep.status().to_string();
  EXPECT_TRUE(rep->skipped_device_run);
  EXPECT_EQ(rep->graph.host_tasks, 4u + 2u);
  EXPECT_EQ(rep->graph.definitions_recorded, 2u);
  EXPECT_EQ(rep->graph.arena_h2d_calls, 1u);
  EXPECT_EQ(rep->stats.tasks_completed, 0u);
  EXPECT_EQ(rep->graph.graph_nodes_run, 0u);
  for (float v : w->output()) ASSERT_EQ(v, 0.0f);
  // tmr orchestrates on the device: nothing runs at all.
  cfg.runtime = "tmr";
  auto tmr = ChipWorker::create(cfg);
  ASSERT_TRUE(tmr.ok());
  auto tid = (*tmr)->register_callable(w->callable());
  ASSERT_TRUE(tid.ok());
  ChipTaskArgs targs;
  ASSERT_TRUE(w->bind_args(targs).ok());
  auto trep = (*tmr)->run(*tid, targs);
  ASSERT_TRUE(trep.ok());
  EXPECT_TRUE(trep->skipped_device_run);
  EXPECT_EQ(trep->stats.tasks_submitted, 0u);
}

TEST(Dsv4Chip, BadParametersAreNamed) {
  auto w = make_dsv4_chip_workload();
  ASSERT_TRUE(w->params().set("heads", 6).ok());
  ASSERT_TRUE(w->params().set("kv_heads", 4).ok());
  EXPECT_THAT(w->setup().message(), ::testing::HasSubstr("heads 6 is not a multiple of kv_heads 4"));
  auto w2 = make_dsv4_chip_workload();
  ASSERT_TRUE(w2->params().set("topk", 9).ok());
  EXPECT_THAT(w2->setup().message(), ::testing::HasSubstr("topk 9 exceeds experts 8"));
  auto w3 = make_dsv4_chip_workload();
  ASSERT_TRUE(w3->params().set("dense_layers", 5).ok());
  EXPECT_THAT(w3->setup().message(), ::testing::HasSubstr("dense_layers 5 exceeds layers 4"));
  EXPECT_EQ(w3->params().set("graph", 2).code(), StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace taskring::workloads
