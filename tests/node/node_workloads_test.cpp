// The L3 reference workloads: golden passes over several rounds, and the
// check can fail (a corrupted output is caught).
#include <gtest/gtest.h>

#include "taskring/workloads/node_workload.hpp"

namespace taskring::workloads {
namespace {

void run_rounds(std::string_view name, int chips, int rounds,
                std::initializer_list<std::pair<const char*, int64_t>> params = {}) {
  auto w = make_node_workload(name);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  NodeWorkload& wl = **w;
  ASSERT_TRUE(wl.params().set("chips", chips).ok());
  for (const auto& [k, v] : params) ASSERT_TRUE(wl.params().set(k, v).ok()) << k;
  ASSERT_TRUE(wl.validate().ok());
  node::NodeConfig cfg = wl.node_config();
  cfg.chip_threads = 1;
  node::NodeWorker node(cfg);
  ASSERT_TRUE(wl.register_callables(node).ok());
  Status s = node.init();
  ASSERT_TRUE(s.ok()) << s.to_string();
  ASSERT_TRUE(wl.setup(node).ok());
  for (int r = 0; r < rounds; ++r) {
    wl.reset_output();
    s = node.run(wl.orchestration(), Deadline::after_ms(60000));
    ASSERT_TRUE(s.ok()) << s.to_string();
    s = wl.check();
    ASSERT_TRUE(s.ok()) << "round " << r << ": " << s.to_string();
  }
  wl.reset_output();  // nothing ran since: the check must fail
  if (name == "moe")
    EXPECT_FALSE(wl.check().ok());  // the routing / received rows are checked first
  else
    EXPECT_EQ(wl.check().code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(node.close().ok());
}

TEST(NodeWorkloads, MultiChipMatchesGolden) { run_rounds("multi_chip", 3, 2); }
TEST(NodeWorkloads, MultiChipOnOneChip) { run_rounds("multi_chip", 1, 1); }
TEST(NodeWorkloads, PipelineMatchesGolden) { run_rounds("pipeline", 2, 2); }
// MoE expert parallelism against the single-process layer (received rows
// bit-exact, outputs within the BF16 tolerance): top-k and balanced routing,
// 2, 3, 4 and 8 ranks (8 chips on 2 cores: oversubscribed).
TEST(NodeWorkloads, MoeTopkOnTwoRanks) { run_rounds("moe", 2, 2, {{"experts", 4}, {"topk", 2}}); }
TEST(NodeWorkloads, MoeBalancedOnThreeRanks) {
  run_rounds("moe", 3, 2, {{"experts", 6}, {"topk", 3}, {"balanced-routing", 1}, {"hidden", 33}, {"ffn", 17}});
}
TEST(NodeWorkloads, MoeTopkOnFourRanksOddShapes) {
  run_rounds("moe", 4, 1, {{"experts", 8}, {"topk", 3}, {"tokens", 7}, {"hidden", 24}, {"ffn", 40}});
}
TEST(NodeWorkloads, MoeBalancedOnEightRanks) { run_rounds("moe", 8, 2, {{"balanced-routing", 1}}); }
TEST(NodeWorkloads, MoeTopkOnEightRanks) { run_rounds("moe", 8, 1, {{"topk", 4}, {"tokens", 9}}); }
// The same layer from the building blocks (gating, dispatch, FFN, combine as
// four group tasks), as a workload's orchestration would combine them.
TEST(NodeWorkloads, MoeFromBuildingBlocksOnFourRanks) {
  run_rounds("moe", 4, 2, {{"fused", 0}, {"topk", 3}, {"tokens", 5}});
}
TEST(NodeWorkloads, MoeRejectsExpertsNotSplittingEvenly) {
  auto w = make_node_workload("moe");
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->params().set("chips", 3).ok());
  EXPECT_EQ((*w)->validate().code(), StatusCode::kInvalidArgument);
}

TEST(NodeWorkloads, UnknownNameIsNotFound) {
  auto w = make_node_workload("nope");
  EXPECT_EQ(w.status().code(), StatusCode::kNotFound);
  EXPECT_NE(w.status().message().find("multi_chip"), std::string::npos);
}

}  // namespace
}  // namespace taskring::workloads
