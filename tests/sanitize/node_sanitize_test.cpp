// TASKRING_SANITIZE on a node run: every chip child checks its own tasks,
// and the node's error names the chip and the task. One node workload passes
// with both modes on (the reference node workloads run under both in
// ctest's node_workloads_test_sanitize).
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

#include "pto_orchestration_api.h"
#include "taskring/kernels/builtin_ids.hpp"
#include "taskring/node/node_worker.hpp"

namespace taskring::node {
namespace {

// Copies tensor 0 into tensor 1; with scalar 0 set, tensor 1 is tagged INPUT
// (the bug: the copy kernel writes it).
void copy_entry(const ChipTaskArgs& a) {
  CoreTaskArgs t;
  if (a.scalar(0) != 0) {
    t.add_input(*a.tensor(0)).add_input(*a.tensor(1));
  } else {
    t.add_input(*a.tensor(0)).add_output(*a.tensor(1));
  }
  rt_submit_aiv_task(kernels::builtin_id::kCopy, t);
}

Status run_two_chips(const char* mode, int buggy_chip) {
  NodeConfig cfg;
  cfg.chips = 2;
  cfg.chip_threads = 1;
  cfg.heap_ring_bytes = 1 << 20;
  cfg.shared_bytes = 1 << 20;
  cfg.close_timeout_ms = 5000;
  cfg.env = map_env({{"TASKRING_SANITIZE", mode}, {"TASKRING_LOG_LEVEL", "WARN"}});
  NodeWorker w(cfg);
  ChipCallable c;
  c.name = "copy";
  c.entry = copy_entry;
  auto id = w.register_chip(c);
  EXPECT_TRUE(id.ok()) << id.status().to_string();
  TASKRING_RETURN_IF_ERROR(w.init());
  constexpr uint32_t n = 1024;
  float* x = static_cast<float*>(*w.alloc_shared(n * 4));
  for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  ChipTensor X = make_tensor_external(x, {n});
  ChipTensor Y[2] = {make_tensor_external(*w.alloc_shared(n * 4), {n}),
                     make_tensor_external(*w.alloc_shared(n * 4), {n})};
  RunHandle h = w.submit([&](Orchestrator& o) -> Status {
    for (int chip = 0; chip < 2; ++chip) {
      ChipTaskArgs a;
      a.add_input(X).add_output(Y[chip]).add_scalar(chip == buggy_chip ? 1 : 0);
      TASKRING_RETURN_IF_ERROR(o.submit_next_level(*id, a, chip));
    }
    return Status::Ok();
  });
  Status s = h.wait(Deadline::after_ms(60000));
  if (s.ok()) {
    for (int chip = 0; chip < 2; ++chip) EXPECT_EQ(Y[chip].data<float>()[n - 1], static_cast<float>(n - 1));
  }
  EXPECT_TRUE(w.close().ok());
  return s;
}

TEST(NodeSanitize, CorrectRunPassesWithBothModes) {
  Status s = run_two_chips("tags,schedule:3", -1);
  EXPECT_TRUE(s.ok()) << s.to_string();
}

TEST(NodeSanitize, ChipChildNamesChipAndTask) {
  Status s = run_two_chips("tags", 1);
  ASSERT_FALSE(s.ok()) << "chip 1's kernel wrote an INPUT and the run passed";
  const std::string m = s.message();
  std::printf("the node's error: %s\n", m.c_str());
  EXPECT_NE(m.find("chip 1"), std::string::npos) << m;
  EXPECT_NE(m.find("KERNEL_FAILED: task 0:0 kernel 'copy' (id "), std::string::npos) << m;
  EXPECT_NE(m.find("of argument 1 (INPUT), which the task may only read"), std::string::npos) << m;
}

}  // namespace
}  // namespace taskring::node
