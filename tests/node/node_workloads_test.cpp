// The L3 reference workloads: golden passes over several rounds, and the
// check can fail (a corrupted output is caught).
#include <gtest/gtest.h>

#include "taskring/workloads/node_workload.hpp"

namespace taskring::workloads {
namespace {

void run_rounds(std::string_view name, int chips, int rounds) {
  auto w = make_node_workload(name);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  NodeWorkload& wl = **w;
  ASSERT_TRUE(wl.params().set("chips", chips).ok());
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
  EXPECT_EQ(wl.check().code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(node.close().ok());
}

TEST(NodeWorkloads, MultiChipMatchesGolden) { run_rounds("multi_chip", 3, 2); }
TEST(NodeWorkloads, MultiChipOnOneChip) { run_rounds("multi_chip", 1, 1); }
TEST(NodeWorkloads, PipelineMatchesGolden) { run_rounds("pipeline", 2, 2); }
TEST(NodeWorkloads, UnknownNameIsNotFound) {
  auto w = make_node_workload("nope");
  EXPECT_EQ(w.status().code(), StatusCode::kNotFound);
  EXPECT_NE(w.status().message().find("multi_chip"), std::string::npos);
}

}  // namespace
}  // namespace taskring::workloads
