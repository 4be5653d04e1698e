// The tiny-ring program shared by the back-pressure and stress tests.
//
// Each iteration opens a scope at depth 1..4 (rings 1..3) with two tasks:
//   t1: tmp = acc[c] + i      (OUTPUT from the heap, RAW on acc[c])
//   t2: acc[c] = tmp + 0      (creator edge on tmp, WAR on t1's read of acc[c])
// over 3 interleaved chains c, plus an SPMD fill every 16 iterations. It
// submits 2*iterations + iterations/16 tasks, each t1 needs one 1 KiB heap
// block, and the result is known in closed form, so a run that loses,
// repeats or reorders a task is caught.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime_test_util.hpp"

namespace taskring::rtest {

struct TinyRingSizes {
  uint64_t window, heap, pool;  // the same on every ring
  int threads;                  // TASKRING_SIM_THREADS
};

inline std::string describe(const TinyRingSizes& s) {
  return "window " + std::to_string(s.window) + " heap " + std::to_string(s.heap) + " pool " + std::to_string(s.pool) +
         " threads " + std::to_string(s.threads);
}

inline uint64_t tiny_ring_tasks(int iterations) {
  return 2ull * static_cast<uint64_t>(iterations) + static_cast<uint64_t>(iterations / 16);
}

// Runs the program on `rig` with `rings`; returns the run's result. `acc` and
// `spmd` receive the output buffers. `t1_spin_us` > 0 makes every t1 busy
// for that long (same result): the orchestrator then outruns the executors
// for certain, so the rings fill and back-pressure must happen.
inline Expected<RunReport> run_tiny_ring_program(Rig& rig, const RingSizes& rings, int iterations,
                                                 std::vector<int32_t>* acc, std::vector<int32_t>* spmd,
                                                 int t1_spin_us = 0) {
  constexpr int kChains = 3;
  acc->assign(kChains * 16, 0);
  spmd->assign(64, 0);
  ChipTensor tacc = make_tensor_external(acc->data(), {kChains, 16}, DataType::INT32);
  ChipTensor tspmd = make_tensor_external(spmd->data(), {64}, DataType::INT32);
  ChipTaskArgs args;
  args.add_inout(tacc).add_inout(tspmd);
  RunConfig rc;
  rc.rings = rings;
  return rig.run(
      [iterations, t1_spin_us](const ChipTaskArgs& a) {
        const ChipTensor& dacc = *a.tensor(0);
        const ChipTensor& dsp = *a.tensor(1);
        TensorCreateInfo ci({1, 16}, DataType::INT32);
        for (int i = 0; i < iterations && !rt_is_fatal(); ++i) {
          int c = i % kChains;
          ChipTensor row = dacc.view({1, 16}, {static_cast<uint32_t>(c), 0});
          int depth = 1 + i % 4;
          for (int d = 0; d < depth; ++d) rt_scope_begin();
          CoreTaskArgs t1;
          t1.add_input(row).add_output(ci);
          if (t1_spin_us > 0)
            step_scalars(t1, -1, -1, -1, 0, t1_spin_us, i);
          else
            t1.add_scalar(i);
          TaskOutputTensors r1 = rt_submit_aiv_task(t1_spin_us > 0 ? kStep : kAdd, t1);
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
}

// Checks the outputs and task counts of a successful run.
inline void expect_tiny_ring_result(const RunReport& report, int iterations, const std::vector<int32_t>& acc,
                                    const std::vector<int32_t>& spmd) {
  constexpr int kChains = 3;
  for (int c = 0; c < kChains; ++c) {
    int64_t want = 0;
    for (int i = c; i < iterations; i += kChains) want += i;
    for (int k = 0; k < 16; ++k) ASSERT_EQ(acc[static_cast<size_t>(c * 16 + k)], want) << "chain " << c;
  }
  for (int v : spmd) ASSERT_EQ(v, iterations / 16);
  EXPECT_EQ(report.stats.tasks_submitted, tiny_ring_tasks(iterations));
  EXPECT_EQ(report.stats.tasks_completed, tiny_ring_tasks(iterations));
}

inline RingSizes uniform_rings(const TinyRingSizes& s) {
  RingSizes r;
  r.task_window = {s.window, s.window, s.window, s.window};
  r.heap = {s.heap, s.heap, s.heap, s.heap};
  r.dep_pool = {s.pool, s.pool, s.pool, s.pool};
  return r;
}

}  // namespace taskring::rtest
