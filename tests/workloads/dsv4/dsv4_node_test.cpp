// dsv4 on a 2-chip node, over a comm domain and through the host: the
// golden with Graph on and off on hbg and tmr, the outputs bit-identical,
// the chip run totals of the Graph form (host-submitted tasks, Definitions
// recorded once, one bulk submission copy), and the host-only mode.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "taskring/workloads/dsv4_node.hpp"

namespace taskring::workloads {
namespace {

struct NodeResult {
  std::vector<float> logits;
  std::vector<std::vector<node::ChipRunTotals>> rounds;  // [round][chip]
  bool all_golden = true;
};

NodeResult run_node(const std::string& runtime, int graph, int chips, int rounds, bool expect_golden = true,
                    int comm = 1, int balanced = 0) {
  NodeResult r;
  auto w = make_dsv4_node();
  EXPECT_TRUE(w->params().set("chips", chips).ok());
  EXPECT_TRUE(w->params().set("graph", graph).ok());
  EXPECT_TRUE(w->params().set("comm", comm).ok());
  EXPECT_TRUE(w->params().set("balanced_routing", balanced).ok());
  Status v = w->validate();
  EXPECT_TRUE(v.ok()) << v.to_string();
  node::NodeConfig cfg = w->node_config();
  cfg.runtime = runtime;
  cfg.chip_threads = 1;
  node::NodeWorker node(cfg);
  Status s = w->register_callables(node);
  if (s.ok()) s = node.init();
  if (s.ok()) s = w->setup(node);
  EXPECT_TRUE(s.ok()) << s.to_string();
  if (!s.ok()) return r;
  for (int round = 0; round < rounds; ++round) {
    w->reset_output();
    s = node.run(w->orchestration(), Deadline::after_ms(120000));
    EXPECT_TRUE(s.ok()) << runtime << " graph=" << graph << ": " << s.to_string();
    if (!s.ok()) return r;
    std::vector<node::ChipRunTotals> per_chip;
    for (int c = 0; c < chips; ++c) {
      auto t = node.take_chip_run_totals(c);
      EXPECT_TRUE(t.ok()) << t.status().to_string();
      per_chip.push_back(t.ok() ? *t : node::ChipRunTotals{});
    }
    r.rounds.push_back(per_chip);
    if (expect_golden) {
      Status g = w->check();
      EXPECT_TRUE(g.ok()) << runtime << " graph=" << graph << " round " << round << ": " << g.to_string();
      r.all_golden &= g.ok();
    }
  }
  r.logits.assign(w->logits().begin(), w->logits().end());
  EXPECT_EQ(node.take_chip_run_totals(chips).status().code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(node.close().ok());
  return r;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && !a.empty() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Over a comm domain (the default): one chip run per chip and step.
TEST(Dsv4Node, TwoChipsOverCommGoldenAndBitIdenticalGraphOnOffOnBothRuntimes) {
  NodeResult on = run_node("hbg", 1, 2, 2);
  NodeResult off = run_node("hbg", 0, 2, 1);
  NodeResult tmr_off = run_node("tmr", 0, 2, 1);
  NodeResult tmr_on = run_node("tmr", 1, 2, 1);
  EXPECT_TRUE(same_bits(on.logits, off.logits));
  EXPECT_TRUE(same_bits(on.logits, tmr_off.logits));
  EXPECT_TRUE(same_bits(on.logits, tmr_on.logits));
  ASSERT_EQ(on.rounds.size(), 2u);
  ASSERT_EQ(off.rounds.size(), 1u);
  for (int c = 0; c < 2; ++c) {
    const node::ChipRunTotals& first = on.rounds[0][static_cast<size_t>(c)];
    const node::ChipRunTotals& second = on.rounds[1][static_cast<size_t>(c)];
    const node::ChipRunTotals& plain = off.rounds[0][static_cast<size_t>(c)];
    EXPECT_EQ(second.runs, 1u);
    EXPECT_EQ(second.graph_tasks, 4u);                       // one GRAPH task per layer (defaults: 4 layers, 1 dense)
    EXPECT_EQ(second.tasks_submitted, 4u + 3u);              // + allgather, final norm, LM head
    EXPECT_EQ(first.definitions_recorded, 2u);               // dense and MoE body, once
    EXPECT_EQ(second.definitions_recorded, 0u);              // kept across runs
    EXPECT_EQ(second.submission_h2d_calls, 1u);              // every layer's submission in one bulk copy
    EXPECT_EQ(second.runtime_h2d_calls, 2u);                 // + the task image
    EXPECT_EQ(second.tasks_executed, plain.tasks_executed);  // the same work either way
    EXPECT_EQ(plain.graph_tasks, 0u);
    EXPECT_GT(plain.tasks_submitted, 10 * second.tasks_submitted);
  }
}

TEST(Dsv4Node, TwoChipsOverCommBalancedRouting) {
  NodeResult r = run_node("hbg", 1, 2, 1, true, 1, /*balanced=*/1);
  EXPECT_TRUE(r.all_golden);
}

// Through the host (comm 0): a node step per layer, a SUB combine between.
TEST(Dsv4Node, TwoChipsThroughTheHostGoldenAndBitIdentical) {
  NodeResult on = run_node("hbg", 1, 2, 2, true, /*comm=*/0);
  NodeResult off = run_node("hbg", 0, 2, 1, true, 0);
  NodeResult tmr_off = run_node("tmr", 0, 2, 1, true, 0);
  EXPECT_TRUE(same_bits(on.logits, off.logits));
  EXPECT_TRUE(same_bits(on.logits, tmr_off.logits));
  ASSERT_EQ(on.rounds.size(), 2u);
  // Defaults: 4 layers (1 dense) + the head = 5 chip runs per chip and round.
  for (int c = 0; c < 2; ++c) {
    const node::ChipRunTotals& first = on.rounds[0][static_cast<size_t>(c)];
    const node::ChipRunTotals& second = on.rounds[1][static_cast<size_t>(c)];
    const node::ChipRunTotals& plain = off.rounds[0][static_cast<size_t>(c)];
    EXPECT_EQ(second.runs, 5u);
    EXPECT_EQ(second.graph_tasks, 4u);
    EXPECT_EQ(second.tasks_submitted, 4u + 2u);
    EXPECT_EQ(first.definitions_recorded, 2u);
    EXPECT_EQ(second.definitions_recorded, 0u);
    EXPECT_EQ(second.tasks_executed, plain.tasks_executed);
    EXPECT_GT(plain.tasks_submitted, 20 * second.tasks_submitted);
  }
}

TEST(Dsv4Node, OneChipMatchesGolden) {
  EXPECT_TRUE(run_node("hbg", 1, 1, 1).all_golden);           // a domain of one
  EXPECT_TRUE(run_node("hbg", 1, 1, 1, true, 0).all_golden);  // host exchange
}

// TASKRING_SKIP_DEVICE_RUN: hbg still orchestrates and uploads (host tasks,
// Definitions recorded), nothing executes, so the logits stay zero.
TEST(Dsv4Node, SkipDeviceRunMeasuresTheHostHalfOnly) {
  ASSERT_EQ(setenv("TASKRING_SKIP_DEVICE_RUN", "1", 1), 0);  // the chip children read it at init
  NodeResult r = run_node("hbg", 1, 2, 1, /*expect_golden=*/false);
  unsetenv("TASKRING_SKIP_DEVICE_RUN");
  ASSERT_EQ(r.rounds.size(), 1u);
  for (const node::ChipRunTotals& t : r.rounds[0]) {
    EXPECT_EQ(t.skipped_device_runs, t.runs);
    EXPECT_EQ(t.tasks_executed, 0u);
    EXPECT_EQ(t.tasks_submitted, 7u);
    EXPECT_EQ(t.definitions_recorded, 2u);
  }
  ASSERT_FALSE(r.logits.empty());
  for (float v : r.logits) ASSERT_EQ(v, 0.0f);
}

}  // namespace
}  // namespace taskring::workloads
