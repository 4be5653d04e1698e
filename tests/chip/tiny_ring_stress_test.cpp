// Tiny-ring stress: the tiny-ring program (tiny_ring_program.hpp) run
// hundreds of times while a background thread keeps a core busy, so the
// orchestrator, schedulers and executors are preempted at arbitrary points.
// A program that fits its rings must always finish with the right numbers;
// one that does not fit must always fail with the same named error.
//
// tmr streams tasks through its rings (back-pressure on window, heap and dep
// pool); hbg keeps a whole run in them (the knobs are capacities checked
// before launch), so on hbg the program is run at exactly the smallest size
// that fits and at the next smaller one.
//
// A bounded slice runs everywhere (label 'stress'); TASKRING_SLOW_TESTS=1
// runs the full count (`make test-slow`).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "runtime_test_util.hpp"
#include "test_scale.hpp"
#include "tiny_ring_program.hpp"

namespace taskring::rtest {
namespace {

using taskring::testing::test_scale;

// Busy-spins one thread until destroyed: simulated load on the 2-core CI
// machine (the runtime's threads then share cores with a thread that never
// yields voluntarily).
class CpuHog {
 public:
  CpuHog()
      : thread_([this] {
          uint64_t x = 0;
          while (!stop_.load(std::memory_order_relaxed)) x = x * 6364136223846793005ull + 1;
          sink_.store(x, std::memory_order_relaxed);
        }) {}
  ~CpuHog() {
    stop_.store(true, std::memory_order_relaxed);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> sink_{0};
  std::thread thread_;
};

// tmr: each size constrains one ring resource hard (window, heap or dep
// pool), or all of them.
TEST(TinyRingStress, TmrFinishesEveryRunUnderLoad) {
  const TinyRingSizes sizes[] = {
      {4, 1 << 20, 1024, 2},  // window
      {64, 2048, 1024, 2},    // heap: two 1 KiB outputs per ring
      {64, 1 << 20, 4, 2},    // dep pool
      {4, 2048, 4, 1},        // everything, one executor thread
      {8, 1024, 4, 3},        // everything, more threads than cores
      {16, 4096, 16, 4},
  };
  const int runs = test_scale(600, 60, 6000);
  CpuHog hog;
  uint64_t blocked = 0;
  int done = 0;
  for (const TinyRingSizes& s : sizes) {
    SCOPED_TRACE(describe(s));
    Rig rig({{"TASKRING_SIM_THREADS", std::to_string(s.threads)}, {"TASKRING_SIM_CLUSTERS", "4"}});
    ASSERT_NE(rig.worker, nullptr);
    for (int r = 0; r < runs / 6; ++r) {
      std::vector<int32_t> acc, spmd;
      // Every other run keeps t1 busy: the rings then fill for certain; the
      // others race the executors freely.
      auto report = run_tiny_ring_program(rig, uniform_rings(s), 64, &acc, &spmd, r % 2 == 0 ? 0 : 5);
      ASSERT_TRUE(report.ok()) << "run " << r << ": " << report.status().to_string();
      expect_tiny_ring_result(*report, 64, acc, spmd);
      if (::testing::Test::HasFatalFailure() || ::testing::Test::HasNonfatalFailure()) return;
      blocked += report->stats.orch_blocked;
      ++done;
    }
  }
  std::printf("[stress] tmr: %d runs, orch_blocked total %llu\n", done, static_cast<unsigned long long>(blocked));
  EXPECT_GT(blocked, 0u) << "no run ever waited on a ring: the sizes are not tiny";
}

// Back-to-back one-task runs on tmr: a run ends only after its own
// orchestration. The executor that completes the last task and the
// orchestrator finishing its run race to close it; an orchestrator preempted
// there must not read the next run's reset counters as "all done" and close
// that run before its task ran (the increment would then be missing, and its
// stats read while the orchestrator still writes them: a TSan race).
TEST(TinyRingStress, TmrBackToBackRunsEachEndAfterTheirOwnTask) {
  const int runs = test_scale(3000, 600, 30000);
  CpuHog hog;
  for (int threads : {1, 3}) {
    SCOPED_TRACE("TASKRING_SIM_THREADS=" + std::to_string(threads));
    Rig rig({{"TASKRING_SIM_THREADS", std::to_string(threads)}});
    ASSERT_NE(rig.worker, nullptr);
    InoutArg arg;
    for (int r = 0; r < runs / 2; ++r) {
      auto report = rig.run(
          [](const ChipTaskArgs& a) {
            CoreTaskArgs inc;
            inc.add_inout(*a.tensor(0)).add_scalar(1);
            rt_submit_aiv_task(kInc, inc);
          },
          arg.args);
      ASSERT_TRUE(report.ok()) << "run " << r << ": " << report.status().to_string();
      ASSERT_EQ(report->stats.tasks_submitted, 1u) << "run " << r;
      ASSERT_EQ(arg.x[0], r + 1) << "run " << r << " ended before its task ran";
    }
  }
}

// Smallest value of one knob (the same on every ring) for which the program
// fits on hbg, by bisection over [lo, hi]; 0 if even hi does not fit.
uint64_t smallest_fitting(Rig& rig, int iterations, uint64_t lo, uint64_t hi,
                          const std::function<RingSizes(uint64_t)>& sizes) {
  std::vector<int32_t> acc, spmd;
  if (!run_tiny_ring_program(rig, sizes(hi), iterations, &acc, &spmd).ok()) return 0;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (run_tiny_ring_program(rig, sizes(mid), iterations, &acc, &spmd).ok())
      hi = mid;
    else
      lo = mid + 1;
  }
  return hi;
}

// hbg: at the exact fit every run finishes; one entry less always fails with
// the knob named.
TEST(TinyRingStress, HbgExactFitAlwaysRunsAndOneLessAlwaysFails) {
  constexpr int kIterations = 37;  // 76 tasks, 37 heap blocks
  const int runs = test_scale(300, 30, 3000);
  Rig rig(OnRuntime{"hbg"}, {{"TASKRING_SIM_THREADS", "2"}, {"TASKRING_SIM_CLUSTERS", "4"}});
  ASSERT_NE(rig.worker, nullptr);
  const RingSizes roomy = uniform_rings({64, 1 << 20, 1024, 2});
  // The window is a power of two per ring: 64 + 4 + 4 + 4 = 76 slots fit
  // exactly; 32 + 32 + 4 + 4 = 72 do not.
  RingSizes window_fit = roomy, window_short = roomy;
  window_fit.task_window = {64, 4, 4, 4};
  window_short.task_window = {32, 32, 4, 4};
  ASSERT_EQ(tiny_ring_tasks(kIterations), 76u);
  // Heap: 37 blocks of 1 KiB, summed over the rings (ring 0 takes the rest).
  RingSizes heap_fit = roomy, heap_short = roomy;
  heap_fit.heap = {34 * 1024, 1024, 1024, 1024};
  heap_short.heap = {33 * 1024, 1024, 1024, 1024};
  // Dep pool: the edge count is what the runtime infers; found by bisection.
  auto pool_sizes = [&](uint64_t n) {
    RingSizes r = roomy;
    r.dep_pool = {n, 4, 4, 4};
    return r;
  };
  uint64_t pool = smallest_fitting(rig, kIterations, 4, 1024, pool_sizes);
  ASSERT_GT(pool, 4u) << "the program must need more than the minimum pool";
  struct Case {
    const char* name;
    RingSizes fit, short_of;
    const char* knob;
  };
  const Case cases[] = {{"window", window_fit, window_short, "PTO2_RING_TASK_WINDOW"},
                        {"heap", heap_fit, heap_short, "PTO2_RING_HEAP"},
                        {"dep pool", pool_sizes(pool), pool_sizes(pool - 1), "PTO2_RING_DEP_POOL"}};
  CpuHog hog;
  int done = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    for (int r = 0; r < runs / 3; ++r) {
      std::vector<int32_t> acc, spmd;
      auto ok = run_tiny_ring_program(rig, c.fit, kIterations, &acc, &spmd);
      ASSERT_TRUE(ok.ok()) << "run " << r << ": " << ok.status().to_string();
      expect_tiny_ring_result(*ok, kIterations, acc, spmd);
      auto bad = run_tiny_ring_program(rig, c.short_of, kIterations, &acc, &spmd);
      ASSERT_FALSE(bad.ok()) << "run " << r << " fits one entry short of the exact fit";
      ASSERT_TRUE(contains(bad.status().message(), c.knob)) << "run " << r << ": " << bad.status().to_string();
      if (::testing::Test::HasFatalFailure() || ::testing::Test::HasNonfatalFailure()) return;
      ++done;
    }
  }
  std::printf("[stress] hbg: %d exact-fit runs (and as many one-short runs), dep pool %llu\n", done,
              static_cast<unsigned long long>(pool));
}

}  // namespace
}  // namespace taskring::rtest
