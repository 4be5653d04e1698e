// The run mode a chip picks when TASKRING_RUN_INLINE is unset (run_mode.hpp):
// the picker's rule on given timings, and a worker following it (which way
// each run went, and the same results either way).
#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "run_mode.hpp"
#include "runtime_test_util.hpp"
#include "taskring/kernels/kernel_sync.h"

namespace taskring::rtest {
namespace {

// Feeds the picker `runs` runs of callable 0 at the given ns per task by
// mode; returns which way each run went.
std::vector<bool> drive(RunModePicker& p, int runs, double threaded_ns, double inline_ns) {
  std::vector<bool> ways;
  for (int r = 0; r < runs; ++r) {
    const bool in = p.next_inline(0);
    ways.push_back(in);
    p.record(0, in, static_cast<uint64_t>((in ? inline_ns : threaded_ns) * 1000), 1000, true, false);
  }
  return ways;
}

// The ways of `runs` runs: threaded at the given indices, inline elsewhere.
std::vector<bool> inline_except(int runs, std::vector<int> threaded) {
  std::vector<bool> ways(static_cast<size_t>(runs), true);
  for (int r : threaded) ways[static_cast<size_t>(r)] = false;
  return ways;
}

TEST(RunModePicker, InlineRunsUntilOneThreadedProbeThenKeepsTheFaster) {
  constexpr int kProbe = RunModePicker::kProbeRun;
  RunModePicker fast_inline;
  EXPECT_EQ(drive(fast_inline, 12, 200, 100), inline_except(12, {0, kProbe}));
  RunModePicker fast_threaded;
  EXPECT_EQ(drive(fast_threaded, 12, 70, 100), inline_except(12, {0, kProbe, 9, 10, 11}));
  // Threaded 15 % faster: inline is kept; 25 % faster: threaded.
  RunModePicker close;
  EXPECT_EQ(drive(close, 12, 85, 100), inline_except(12, {0, kProbe}));
  RunModePicker clear;
  EXPECT_EQ(drive(clear, 12, 75, 100), inline_except(12, {0, kProbe, 9, 10, 11}));
}

// Feeds the runs up to and including the probe of callable 0, run r
// taking ns[r] per task (the rest of the runs before the probe take `rest`);
// returns the way kept after them (true: inline).
bool probe(const std::vector<double>& ns, double rest) {
  RunModePicker p;
  for (int r = 0; r <= RunModePicker::kProbeRun; ++r) {
    const double v = r < static_cast<int>(ns.size()) ? ns[static_cast<size_t>(r)] : rest;
    p.record(0, p.next_inline(0), static_cast<uint64_t>(v * 1000), 1000, true, false);
  }
  return p.next_inline(0);
}

TEST(RunModePicker, TheProbeIsJudgedAgainstTheInlineRunJustBeforeIt) {
  static_assert(RunModePicker::kProbeRun == 8, "the runs below are written for a probe at run 8");
  // Inline still warming over runs 1-7 (900 ... 100): a probe at 85 is not
  // under 80 % of the latest inline run, though it beats the earlier ones.
  EXPECT_TRUE(probe({50, 900, 900, 300, 150, 120, 110, 100, 85}, 0));
  EXPECT_FALSE(probe({50, 900, 900, 300, 150, 120, 110, 100, 75}, 0));
  // A failed inline run just before the probe leaves no inline figure: threaded.
  RunModePicker p;
  for (int r = 0; r <= RunModePicker::kProbeRun; ++r) {
    const bool in = p.next_inline(0);
    p.record(0, in, in ? 100000 : 900000, 1000, /*ok=*/r != RunModePicker::kProbeRun - 1, false);
  }
  EXPECT_FALSE(p.next_inline(0));
}

// A caller that times only the runs needs_time() names (hbg's replays)
// reaches the same decisions as one that times every run.
TEST(RunModePicker, TimingOnlyTheRunsItNeedsDecidesAlike) {
  for (double threaded_ns : {70.0, 200.0}) {
    RunModePicker all, some;
    std::vector<int> timed;
    for (int r = 0; r < 3 * RunModePicker::kReprobeEvery; ++r) {
      const bool in = all.next_inline(0);
      ASSERT_EQ(some.next_inline(0), in) << "run " << r;
      const uint64_t ns = static_cast<uint64_t>((in ? 100.0 : threaded_ns) * 1000);
      all.record(0, in, ns, 1000, true, false);
      const bool need = some.needs_time(0);
      if (need) timed.push_back(r);
      some.record(0, in, need ? ns : 0, need ? 1000 : 0, true, false);
    }
    // The run before the probe and the probe, then the run before each
    // re-probe and the re-probe.
    constexpr int kP = RunModePicker::kProbeRun, kE = RunModePicker::kReprobeEvery;
    EXPECT_EQ(timed, (std::vector<int>{kP - 1, kP, kP + kE - 1, kP + kE, kP + 2 * kE - 1, kP + 2 * kE}));
  }
}

TEST(RunModePicker, RetriesTheOtherWayEveryReprobeRunsAndSwitchesOnlyWhenClearlyFaster) {
  RunModePicker p;
  drive(p, RunModePicker::kProbeRun + 1, 200, 100);  // inline chosen
  std::vector<int> tried_threaded;
  for (int r = 0; r < 2 * RunModePicker::kReprobeEvery; ++r) {
    const bool in = p.next_inline(0);
    if (!in) tried_threaded.push_back(r);
    // Threaded only 5 % faster than inline's latest: not enough to switch.
    p.record(0, in, in ? 100000 : 95000, 1000, true, false);
  }
  EXPECT_EQ(tried_threaded,
            (std::vector<int>{RunModePicker::kReprobeEvery - 1, 2 * RunModePicker::kReprobeEvery - 1}));
  // The machine changed: threaded now takes half the time; the next re-probe switches.
  bool switched = false;
  for (int r = 0; r < RunModePicker::kReprobeEvery && !switched; ++r) {
    const bool in = p.next_inline(0);
    p.record(0, in, in ? 100000 : 50000, 1000, true, false);
    switched = !in && !p.next_inline(0);
  }
  EXPECT_TRUE(switched);
}

TEST(RunModePicker, FailedOrEmptyRunsAreNotEvidence) {
  RunModePicker p;
  for (int r = 0; r <= RunModePicker::kProbeRun; ++r) {
    const bool in = p.next_inline(0);
    // Every inline run fails; the threaded ones are slow but succeed.
    p.record(0, in, in ? 1 : 900000, 1000, !in, false);
  }
  EXPECT_FALSE(p.next_inline(0)) << "a way that never completed a probe was chosen";
  RunModePicker q;
  for (int r = 0; r <= RunModePicker::kProbeRun; ++r) q.record(0, q.next_inline(0), 1000, 0, true, false);
  EXPECT_FALSE(q.next_inline(0));
}

TEST(RunModePicker, AKernelThatWaitedKeepsItsCallableThreadedForGood) {
  RunModePicker p;
  ASSERT_FALSE(p.next_inline(0));
  p.record(0, false, 1000000, 1000, true, /*waited=*/true);
  for (int r = 0; r < 3 * RunModePicker::kReprobeEvery; ++r) {
    ASSERT_FALSE(p.next_inline(0)) << "run " << r;
    p.record(0, false, 1000000, 1000, true, false);
  }
  // Other callables keep their own state.
  EXPECT_FALSE(p.next_inline(1));
  p.record(1, false, 1000, 1, true, false);
  EXPECT_TRUE(p.next_inline(1));
}

// Ten INOUT increments; the result is the same whichever way a run went.
std::vector<bool> run_increments(Rig& rig, int runs) {
  std::vector<bool> ways;
  for (int r = 0; r < runs; ++r) {
    InoutArg arg;
    auto report = rig.run(
        [](const ChipTaskArgs& a) {
          for (int i = 0; i < 10; ++i) {
            CoreTaskArgs inc;
            inc.add_inout(*a.tensor(0)).add_scalar(1);
            rt_submit_aiv_task(kInc, inc);
          }
        },
        arg.args);
    EXPECT_TRUE(report.ok()) << report.status().to_string();
    if (!report.ok()) return ways;
    EXPECT_EQ(arg.x[0], 10) << "run " << r;
    EXPECT_EQ(report->stats.tasks_completed, 10u);
    ways.push_back(report->ran_inline);
  }
  return ways;
}

TEST(RunMode, UnsetKnobOnTmrProbesBothWaysThenKeepsOne) {
  Rig rig(std::map<std::string, std::string>{{"TASKRING_SIM_THREADS", "2"}});
  constexpr int kProbe = RunModePicker::kProbeRun;
  const auto ways = run_increments(rig, kProbe + 3);
  ASSERT_EQ(ways.size(), static_cast<size_t>(kProbe + 3));
  EXPECT_EQ(std::vector<bool>(ways.begin(), ways.begin() + kProbe + 1), inline_except(kProbe + 1, {0, kProbe}));
  EXPECT_EQ(ways[kProbe + 1], ways[kProbe + 2]);
}

TEST(RunMode, TheKnobForcesTheWay) {
  for (const char* v : {"0", "1"}) {
    SCOPED_TRACE(v);
    Rig rig(std::map<std::string, std::string>{{"TASKRING_RUN_INLINE", v}});
    EXPECT_EQ(run_increments(rig, 5), std::vector<bool>(5, v[0] == '1'));
  }
}

TEST(RunMode, HbgStaysThreadedWhenUnset) {
  Rig rig(OnRuntime{"hbg"}, {});
  EXPECT_EQ(run_increments(rig, 5), std::vector<bool>(5, false));
}

// A second callable on the rig: rtest_entry with kInc bound to `kernel`.
Expected<int> register_one_kernel(Rig& rig, const char* name, taskring_kernel_fn kernel) {
  ChipCallable c;
  c.name = name;
  c.entry = rtest_entry;
  c.kernels = {{kInc, kernel, "", name}};
  return rig.worker->register_callable(c);
}

// A picked inline run executes every task on one thread, the runtime's
// orchestrator thread (so the caller keeps its run timeout), with the
// executors sitting it out; a threaded one uses the executors.
std::mutex g_tids_mu;
std::set<std::thread::id> g_tids;
// No arguments, so its tasks are independent: a threaded run's executors
// take them while the orchestration is still submitting.
extern "C" void rk_note_tid(int64_t*) {
  std::lock_guard<std::mutex> lock(g_tids_mu);
  g_tids.insert(std::this_thread::get_id());
}

TEST(RunMode, APickedInlineRunExecutesEveryTaskOnOneThreadThatIsNotTheCaller) {
  Rig rig(std::map<std::string, std::string>{{"TASKRING_SIM_THREADS", "2"}});
  auto id = register_one_kernel(rig, "tids", rk_note_tid);
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  for (int r = 0; r <= RunModePicker::kProbeRun; ++r) {
    {
      std::lock_guard<std::mutex> lock(g_tids_mu);
      g_tids.clear();
    }
    InoutArg arg;
    g_body = [](const ChipTaskArgs&) {
      for (int i = 0; i < 4000; ++i) {
        CoreTaskArgs none;
        rt_submit_aiv_task(kInc, none);
      }
    };
    auto report = rig.worker->run(*id, arg.args);
    ASSERT_TRUE(report.ok()) << report.status().to_string();
    EXPECT_EQ(report->stats.tasks_completed, 4000u);
    std::lock_guard<std::mutex> lock(g_tids_mu);
    if (report->ran_inline) {
      EXPECT_EQ(g_tids.size(), 1u) << "run " << r << ": an inline run's tasks ran on several threads";
      EXPECT_EQ(g_tids.count(std::this_thread::get_id()), 0u) << "run " << r << ": ran on the caller";
    } else {
      EXPECT_EQ(g_tids.count(std::this_thread::get_id()), 0u) << "run " << r;
    }
  }
}

// Waits once for a flag that is already set: a kernel that waits on a
// sibling, as far as the chip can tell.
extern "C" void rk_wait_once(int64_t* args) {
  KernelGlobalContext* g = taskring_kernel_global(args);
  (void)g->wait_yield(taskring_kernel_local(args), 1);
  rk_inc(args);
}

TEST(RunMode, AKernelThatWaitsKeepsTheCallableThreaded) {
  Rig rig(std::map<std::string, std::string>{{"TASKRING_SIM_THREADS", "2"}});
  auto id = register_one_kernel(rig, "waits", rk_wait_once);
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  for (int r = 0; r < 6; ++r) {
    InoutArg arg;
    g_body = [](const ChipTaskArgs& a) {
      CoreTaskArgs inc;
      inc.add_inout(*a.tensor(0)).add_scalar(1);
      rt_submit_aiv_task(kInc, inc);
    };
    auto report = rig.worker->run(*id, arg.args);
    ASSERT_TRUE(report.ok()) << report.status().to_string();
    EXPECT_EQ(arg.x[0], 1);
    EXPECT_FALSE(report->ran_inline) << "run " << r << " went inline after a kernel waited";
  }
  // The rig's own callable still probes both ways.
  const auto ways = run_increments(rig, 2);
  EXPECT_EQ(ways, (std::vector<bool>{false, true}));
}

}  // namespace
}  // namespace taskring::rtest
