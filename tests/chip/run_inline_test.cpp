// Inline runs (TASKRING_RUN_INLINE, L2RuntimeConfig::run_inline): the thread
// that launches a run orchestrates it and executes its tasks; the runtime
// starts no thread of its own. Back-pressure and get/set_tensor_data are
// served by that thread running ready tasks, and a run that can make no
// progress that way fails at once instead of at the stall deadline. The
// differential test and TensorData.Inline* cover inline results too.
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>

#include "runtime_test_util.hpp"
#include "thread_count.hpp"
#include "tiny_ring_program.hpp"

namespace taskring::rtest {
namespace {

using taskring::testing::process_thread_count;

std::atomic<long> g_kernel_tid{0};
std::atomic<int> g_kernel_tids_seen{0};

extern "C" void rk_note_thread(int64_t* args) {
  const long tid = syscall(SYS_gettid);
  if (g_kernel_tid.exchange(tid) != tid) g_kernel_tids_seen.fetch_add(1);
  rk_inc(args);
}

void tasks_run_on_the_launching_thread(const char* runtime) {
  SCOPED_TRACE(runtime);
  const int before = process_thread_count();
  ChipWorkerConfig cfg;
  cfg.runtime = runtime;
  cfg.env = map_env({{"TASKRING_RUN_INLINE", "1"}, {"TASKRING_SIM_THREADS", "4"}});
  auto w = ChipWorker::create(cfg);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  EXPECT_EQ(process_thread_count(), before) << "an inline runtime started threads";
  ChipCallable c;
  c.name = "inline";
  c.entry = rtest_entry;
  c.kernels = {{kInc, rk_note_thread, "", "note_thread"}};
  auto id = (*w)->register_callable(c);
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  g_kernel_tid = 0;
  g_kernel_tids_seen = 0;
  g_body = [](const ChipTaskArgs& a) {
    for (int i = 0; i < 40; ++i) {
      CoreTaskArgs inc;
      inc.add_inout(*a.tensor(0)).add_scalar(i % 2 == 0 ? 1 : 2);
      rt_submit_aiv_task(kInc, inc);
    }
  };
  InoutArg arg;
  auto report = (*w)->run(*id, arg.args);
  g_body = nullptr;
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  EXPECT_EQ(arg.x[0], 60);
  EXPECT_EQ(report->stats.tasks_completed, 40u);
  EXPECT_EQ(g_kernel_tid.load(), syscall(SYS_gettid)) << "a kernel ran off the launching thread";
  EXPECT_EQ(g_kernel_tids_seen.load(), 1);
}

TEST(RunInline, TmrRunsEveryTaskOnTheLaunchingThread) { tasks_run_on_the_launching_thread("tmr"); }
TEST(RunInline, HbgRunsEveryTaskOnTheLaunchingThread) { tasks_run_on_the_launching_thread("hbg"); }

// The orchestration outruns no executor here: a full ring is drained by the
// orchestrating thread itself, and the numbers are those of a threaded run.
TEST(RunInline, FullRingsAreDrainedByTheOrchestratingThread) {
  for (TinyRingSizes s : {TinyRingSizes{4, 2048, 4, 1}, TinyRingSizes{8, 3072, 8, 1}, TinyRingSizes{16, 4096, 16, 1}}) {
    SCOPED_TRACE(describe(s));
    Rig rig({{"TASKRING_RUN_INLINE", "1"}, {"TASKRING_SIM_CLUSTERS", "4"}});
    std::vector<int32_t> acc, spmd;
    auto report = run_tiny_ring_program(rig, uniform_rings(s), 256, &acc, &spmd);
    ASSERT_TRUE(report.ok()) << report.status().to_string();
    expect_tiny_ring_result(*report, 256, acc, spmd);
    EXPECT_GT(report->stats.orch_blocked, 0u) << "the rings never filled";
  }
}

// Ring 3 (scopes nested 3 deep and deeper share it), window 4: t0 stays
// pinned by its open depth-3 scope, three completed tasks of a closed
// depth-4 scope sit behind it, and a fifth task needs a slot. Nothing can
// retire before the depth-3 scope closes. A threaded run sees no progress
// until its stall deadline; an inline run, with nothing ready to run, knows
// at once.
void ring_blocked_behind_a_pinned_task(const ChipTaskArgs&) {
  PTO2_SCOPE() {
    PTO2_SCOPE() {
      PTO2_SCOPE() {
        CoreTaskArgs t0;
        step_scalars(t0, -1, -1);
        rt_submit_aiv_task(kStep, t0);
        PTO2_SCOPE() {
          for (int i = 0; i < 3; ++i) {
            CoreTaskArgs t;
            step_scalars(t, -1, -1);
            rt_submit_aiv_task(kStep, t);
          }
        }
        CoreTaskArgs t4;
        step_scalars(t4, -1, -1);
        rt_submit_aiv_task(kStep, t4);
      }
    }
  }
}

TEST(RunInline, ARingThatCannotRetireFailsAtOnce) {
  Rig threaded(std::map<std::string, std::string>{{"TASKRING_STALL_TIMEOUT_MS", "150"}});
  expect_error(threaded, ring_blocked_behind_a_pinned_task,
               {"FLOW_CONTROL_DEADLOCK", "ring 3", "no task retired for 150 ms", "window=4"}, rings(4, 1 << 20, 64));
  // An hour of stall budget: only the inline check can end this run.
  Rig inl({{"TASKRING_RUN_INLINE", "1"}, {"TASKRING_STALL_TIMEOUT_MS", "3600000"}});
  expect_error(inl, ring_blocked_behind_a_pinned_task,
               {"FLOW_CONTROL_DEADLOCK", "ring 3", "no task can retire (inline run, nothing ready)", "window=4",
                "PTO2_RING_TASK_WINDOW"},
               rings(4, 1 << 20, 64));
}

}  // namespace
}  // namespace taskring::rtest
