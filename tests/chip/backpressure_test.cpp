// Back-pressure with tiny rings: windows of 4 to 16 slots, heaps a few KiB
// (near the 1 KiB minimum), dependency pools of a few entries, and 500+
// tasks in scopes small enough to fit. Every run must finish with the right
// numbers; the orchestrator's waits are reported (not asserted: timing).
#include <gtest/gtest.h>

#include <cstdio>

#include "runtime_test_util.hpp"

namespace taskring::rtest {
namespace {

struct Sizes {
  uint64_t window, heap, pool;
  int threads;
};

// Each iteration opens a scope at depth 1..4 (rings 1..3) with two tasks:
//   t1: tmp = acc[c] + i      (OUTPUT from the heap, RAW on acc[c])
//   t2: acc[c] = tmp + 0      (creator edge on tmp, WAR on t1's read of acc[c])
// over 3 interleaved chains c, plus an SPMD fill every 16 iterations.
void run_sizes(const Sizes& s, int iterations) {
  SCOPED_TRACE("window " + std::to_string(s.window) + " heap " + std::to_string(s.heap) + " pool " +
               std::to_string(s.pool) + " threads " + std::to_string(s.threads));
  Rig rig({{"TASKRING_SIM_THREADS", std::to_string(s.threads)}, {"TASKRING_SIM_CLUSTERS", "4"}});
  RunConfig rc;
  rc.rings.task_window = {s.window, s.window, s.window, s.window};
  rc.rings.heap = {s.heap, s.heap, s.heap, s.heap};
  rc.rings.dep_pool = {s.pool, s.pool, s.pool, s.pool};
  constexpr int kChains = 3;
  std::vector<int32_t> acc(kChains * 16, 0), spmd(64, 0);
  ChipTensor tacc = make_tensor_external(acc.data(), {kChains, 16}, DataType::INT32);
  ChipTensor tspmd = make_tensor_external(spmd.data(), {64}, DataType::INT32);
  ChipTaskArgs args;
  args.add_inout(tacc).add_inout(tspmd);
  auto report = rig.run(
      [&](const ChipTaskArgs& a) {
        const ChipTensor& dacc = *a.tensor(0);
        const ChipTensor& dsp = *a.tensor(1);
        TensorCreateInfo ci({1, 16}, DataType::INT32);
        for (int i = 0; i < iterations && !rt_is_fatal(); ++i) {
          int c = i % kChains;
          ChipTensor row = dacc.view({1, 16}, {static_cast<uint32_t>(c), 0});
          int depth = 1 + i % 4;
          for (int d = 0; d < depth; ++d) rt_scope_begin();
          CoreTaskArgs t1;
          t1.add_input(row).add_output(ci).add_scalar(i);
          TaskOutputTensors r1 = rt_submit_aiv_task(kAdd, t1);
          CoreTaskArgs t2;
          t2.add_input(r1.get_ref(0)).add_output(row).add_scalar(0);
          rt_submit_aic_task(kAdd, t2);
          for (int d = 0; d < depth; ++d) rt_scope_end();
          if (i % 16 == 15) {
            PTO2_SCOPE() {
              CoreTaskArgs f;
              f.add_inout(dsp).add_scalar(1);
              f.launch_spec.set_block_num(3);
              rt_submit_aiv_task(kInc, f);
            }
          }
        }
      },
      args, rc);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  for (int c = 0; c < kChains; ++c) {
    int64_t want = 0;
    for (int i = c; i < iterations; i += kChains) want += i;
    for (int k = 0; k < 16; ++k) ASSERT_EQ(acc[static_cast<size_t>(c * 16 + k)], want) << "chain " << c;
  }
  for (int v : spmd) ASSERT_EQ(v, iterations / 16);
  uint64_t tasks = 2ull * static_cast<uint64_t>(iterations) + static_cast<uint64_t>(iterations / 16);
  EXPECT_EQ(report->stats.tasks_submitted, tasks);
  EXPECT_EQ(report->stats.tasks_completed, tasks);
  std::printf("[backpressure] window=%llu heap=%llu dep_pool=%llu threads=%d: %llu tasks, orch_blocked=%llu\n",
              static_cast<unsigned long long>(s.window), static_cast<unsigned long long>(s.heap),
              static_cast<unsigned long long>(s.pool), s.threads, static_cast<unsigned long long>(tasks),
              static_cast<unsigned long long>(report->stats.orch_blocked));
  ::testing::Test::RecordProperty("orch_blocked_w" + std::to_string(s.window),
                                  std::to_string(report->stats.orch_blocked));
}

TEST(BackPressure, TinyRingsFinishCorrectly) {
  // Heap: two 1 KiB outputs may be live per ring (one scope's t1 plus the
  // previous one not yet retired) -> 2 KiB is the smallest that cannot
  // deadlock structurally; 1 KiB rings hold exactly one.
  const Sizes sizes[] = {{4, 2048, 4, 1}, {4, 2048, 4, 2}, {8, 3072, 8, 2}, {16, 4096, 16, 4}, {8, 1024, 4, 2}};
  for (const Sizes& s : sizes) run_sizes(s, 256);
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
