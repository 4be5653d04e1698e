// Back-pressure with tiny rings: windows of 4 to 16 slots, heaps a few KiB
// (near the 1 KiB minimum), dependency pools of a few entries, and 500+
// tasks in scopes small enough to fit. Every run must finish with the right
// numbers, and the orchestrator must have waited on a full ring (orch_blocked
// > 0): every t1 is kept busy for 20 us, so the orchestrator (about a
// microsecond per submit) outruns the executors and fills the rings. Under
// a sanitizer a submit costs several times more, and with 4 executor threads
// on 2 vCPUs the executors kept up (TSan: orch_blocked 0 for the 16-slot
// rings in ~1 run of 15), so there t1 is kept busy for 200 us.
#include <gtest/gtest.h>

#include <cstdio>

#include "runtime_test_util.hpp"
#include "test_scale.hpp"
#include "tiny_ring_program.hpp"

namespace taskring::rtest {
namespace {

void run_sizes(const TinyRingSizes& s, int iterations) {
  SCOPED_TRACE(describe(s));
  Rig rig({{"TASKRING_SIM_THREADS", std::to_string(s.threads)}, {"TASKRING_SIM_CLUSTERS", "4"}});
  std::vector<int32_t> acc, spmd;
  auto report = run_tiny_ring_program(rig, uniform_rings(s), iterations, &acc, &spmd,
                                      /*t1_spin_us=*/taskring::testing::kSanitizedBuild ? 200 : 20);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  expect_tiny_ring_result(*report, iterations, acc, spmd);
  std::printf("[backpressure] %s: %llu tasks, orch_blocked=%llu\n", describe(s).c_str(),
              static_cast<unsigned long long>(tiny_ring_tasks(iterations)),
              static_cast<unsigned long long>(report->stats.orch_blocked));
  ::testing::Test::RecordProperty("orch_blocked_w" + std::to_string(s.window),
                                  std::to_string(report->stats.orch_blocked));
  EXPECT_GT(report->stats.orch_blocked, 0u) << "back-pressure never happened: the rings did not constrain the run";
}

TEST(BackPressure, TinyRingsFinishCorrectly) {
  // Heap: two 1 KiB outputs may be live per ring (one scope's t1 plus the
  // previous one not yet retired) -> 2 KiB is the smallest that cannot
  // deadlock structurally; 1 KiB rings hold exactly one.
  const TinyRingSizes sizes[] = {{4, 2048, 4, 1}, {4, 2048, 4, 2}, {8, 3072, 8, 2}, {16, 4096, 16, 4}, {8, 1024, 4, 2}};
  for (const TinyRingSizes& s : sizes) run_sizes(s, 256);
}

TEST(BackPressure, EmptyHeapRingParkedMidBufferTakesAFullSizeRequest) {
  // ring 1 heap 2048: a 1 KiB output retires, leaving the ring parked at
  // 1024; a 2 KiB request must then fit (no deadlock, no stall).
  Rig rig(std::map<std::string, std::string>{{"TASKRING_STALL_TIMEOUT_MS", "2000"}});
  RunConfig rc;
  rc.rings.heap = {4096, 2048, 4096, 4096};
  std::vector<int32_t> y(512, 0);
  ChipTensor ty = make_tensor_external(y.data(), {512}, DataType::INT32);
  ChipTaskArgs args;
  args.add_output(ty);
  auto report = rig.run(
      [&](const ChipTaskArgs& a) {
        for (int round = 0; round < 3; ++round) {
          PTO2_SCOPE() {
            TensorCreateInfo small({256}, DataType::INT32);
            CoreTaskArgs t;
            t.add_output(small).add_scalar(1);
            rt_submit_aiv_task(kFill, t);
          }
          PTO2_SCOPE() {
            TensorCreateInfo big({512}, DataType::INT32);
            CoreTaskArgs t;
            t.add_output(big).add_scalar(5 + round);
            TaskOutputTensors r = rt_submit_aiv_task(kFill, t);
            CoreTaskArgs c;
            c.add_input(r.get_ref(0)).add_output(*a.tensor(0)).add_scalar(0);
            rt_submit_aiv_task(kAdd, c);
          }
        }
      },
      args, rc);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  for (int v : y) ASSERT_EQ(v, 7);
}

}  // namespace
}  // namespace taskring::rtest
