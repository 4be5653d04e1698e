// Every fatal error path of the tmr runtime and failure propagation: each
// run returns an error that names the ring / sizes / knob or the task and
// kernel, nothing hangs, and the same worker then runs a good program.
#include <gtest/gtest.h>

#include "runtime_test_util.hpp"

#ifndef TASKRING_TEST_ORCH_LIB
#error "TASKRING_TEST_ORCH_LIB must name the orchestration test library"
#endif

namespace taskring::rtest {
namespace {

TEST(FatalErrors, ScopeDeadlock) {
  Rig rig;
  expect_error(
      rig,
      [](const ChipTaskArgs& a) {
        PTO2_SCOPE() {
          for (int i = 0; i < 6; ++i) {
            CoreTaskArgs t;
            t.add_inout(*a.tensor(0)).add_scalar(1);
            rt_submit_aiv_task(kInc, t);
          }
        }
      },
      {"SCOPE_DEADLOCK", "ring 1", "task window is 4", "PTO2_RING_TASK_WINDOW"}, rings(4, 1 << 20, 64));
}

TEST(FatalErrors, HeapRingDeadlock) {
  Rig rig;
  expect_error(
      rig,
      [](const ChipTaskArgs&) {
        PTO2_SCOPE() {
          for (int i = 0; i < 3; ++i) {
            TensorCreateInfo ci({256}, DataType::INT32);  // 1 KiB each
            CoreTaskArgs t;
            t.add_output(ci).add_scalar(i);
            rt_submit_aiv_task(kFill, t);
          }
        }
      },
      {"HEAP_RING_DEADLOCK", "ring 1", "2048 bytes", "pinned by an open scope", "PTO2_RING_HEAP"}, rings(64, 2048, 64));
}

TEST(FatalErrors, HeapTooSmall) {
  Rig rig;
  expect_error(
      rig,
      [](const ChipTaskArgs&) {
        TensorCreateInfo ci({1024}, DataType::INT32);  // 4 KiB
        CoreTaskArgs t;
        t.add_output(ci).add_scalar(1);
        rt_submit_aiv_task(kFill, t);
      },
      {"HEAP_RING_DEADLOCK", "4096", "2048", "PTO2_RING_HEAP"}, rings(64, 2048, 64));  // upstream's code 2
}

TEST(FatalErrors, DependencyPoolOverflow) {
  Rig rig;
  expect_error(
      rig,
      [](const ChipTaskArgs&) {
        CoreTaskArgsWithDeps<16> c;
        for (int i = 0; i < 6; ++i) {
          CoreTaskArgs t;
          step_scalars(t, -1, -1);
          c.add_dep(rt_submit_aiv_task(kStep, t).task_id());
        }
        step_scalars(c, -1, -1);
        rt_submit_aiv_task(kStep, c);
      },
      {"DEP_POOL_OVERFLOW", "6 dependency entries", "holds 4", "PTO2_RING_DEP_POOL"}, rings(64, 1 << 20, 4));
}

// The backstop: the window is full, the oldest task is not pinned by a scope
// (so no structural deadlock is seen) but it waits for the orchestrator,
// which waits for the window.
TEST(FatalErrors, NoProgressBackstop) {
  Rig rig(std::map<std::string, std::string>{{"TASKRING_STALL_TIMEOUT_MS", "150"}});
  expect_error(
      rig,
      [](const ChipTaskArgs&) {
        PTO2_SCOPE() {
          CoreTaskArgs g;
          step_scalars(g, /*wait*/ 3, -1);  // bounded wait (5 s) inside the kernel
          rt_submit_aiv_task(kStep, g);
        }
        PTO2_SCOPE() {
          for (int i = 0; i < 4; ++i) {
            CoreTaskArgs t;
            step_scalars(t, -1, -1);
            rt_submit_aiv_task(kStep, t);
          }
        }
        g_flags[3].store(1);  // reached only after the fatal error
      },
      {"FLOW_CONTROL_DEADLOCK", "ring 1", "no task retired for 150 ms", "window=4", "PTO2_RING_TASK_WINDOW",
       "TASKRING_STALL_TIMEOUT_MS"},
      rings(4, 1 << 20, 64));
}

TEST(FatalErrors, InvalidArguments) {
  Rig rig;
  struct Case {
    const char* name;
    std::function<void(const ChipTaskArgs&)> body;
    std::vector<std::string> parts;
  };
  std::vector<int32_t> host(8, 0);
  std::vector<Case> cases = {
      {"latched args error",
       [](const ChipTaskArgs& a) {
         CoreTaskArgs t;
         t.add_scalar(1).add_inout(*a.tensor(0));
         rt_submit_aiv_task(kInc, t);
       },
       {"INVALID_ARGS", "all tensors must come before any scalar"}},
      {"poisoned view",
       [](const ChipTaskArgs& a) {
         ChipTensor bad = a.tensor(0)->slice(0, 4, 20);
         CoreTaskArgs t;
         t.add_inout(bad).add_scalar(1);
         rt_submit_aiv_task(kInc, t);
       },
       {"INVALID_ARGS", "argument 0"}},
      {"host tensor",
       [&host](const ChipTaskArgs&) {
         ChipTensor h = make_tensor_external(host.data(), {8}, DataType::INT32);
         CoreTaskArgs t;
         t.add_inout(h).add_scalar(1);
         rt_submit_aiv_task(kInc, t);
       },
       {"INVALID_ARGS", "not a device tensor"}},
      {"unknown kernel",
       [](const ChipTaskArgs& a) {
         CoreTaskArgs t;
         t.add_inout(*a.tensor(0)).add_scalar(1);
         rt_submit_aiv_task(77, t);
       },
       {"UNKNOWN_KERNEL", "kernel id 77"}},
      {"block_num 0",
       [](const ChipTaskArgs& a) {
         CoreTaskArgs t;
         t.add_inout(*a.tensor(0)).add_scalar(1);
         t.launch_spec.set_block_num(0);
         rt_submit_aiv_task(kInc, t);
       },
       {"INVALID_ARGS", "block_num 0"}},
      {"alloc_tensors with an input",
       [](const ChipTaskArgs& a) {
         CoreTaskArgs t;
         t.add_input(*a.tensor(0));
         alloc_tensors(t);
       },
       {"INVALID_ARGS", "alloc_tensors takes only OUTPUT"}},
      {"no kernel slot",
       [](const ChipTaskArgs& a) {
         CoreTaskArgs t;
         t.add_inout(*a.tensor(0));
         rt_submit_task(MixedKernels{}, t);
       },
       {"INVALID_ARGS", "no active kernel slot"}},
      {"get_ref out of range",
       [](const ChipTaskArgs& a) {
         CoreTaskArgs t;
         t.add_inout(*a.tensor(0)).add_scalar(1);
         TaskOutputTensors r = rt_submit_aiv_task(kInc, t);
         CoreTaskArgs u;
         u.add_input(r.get_ref(0)).add_scalar(1);
         rt_submit_aiv_task(kInc, u);
       },
       {"INVALID_ARGS"}},
      {"bad OUTPUT create info",
       [](const ChipTaskArgs&) {
         TensorCreateInfo ci;  // ndims 0
         CoreTaskArgs t;
         t.add_output(ci).add_scalar(1);
         rt_submit_aiv_task(kFill, t);
       },
       {"INVALID_ARGS", "OUTPUT"}},
      {"element access out of range",
       [](const ChipTaskArgs& a) {
         uint32_t idx = 8;
         (void)get_tensor_data<int32_t>(*a.tensor(0), 1, &idx);
       },
       {"INVALID_ARGS", "get_tensor_data"}},
      {"scope_end without begin",
       [](const ChipTaskArgs&) {
         rt_scope_end();
         rt_scope_end();
       },
       {"INVALID_ARGS", "scope_end"}},
      {"submit after closing the outer scope",
       [](const ChipTaskArgs& a) {
         rt_scope_end();
         CoreTaskArgs t;
         t.add_inout(*a.tensor(0)).add_scalar(1);
         rt_submit_aiv_task(kInc, t);
       },
       {"INVALID_ARGS", "outside any scope"}},
      {"rt_report_fatal",
       [](const ChipTaskArgs& a) {
         rt_report_fatal(0, "user says %d", 17);
         CoreTaskArgs t;  // ignored after the fatal error
         t.add_inout(*a.tensor(0)).add_scalar(1);
         EXPECT_FALSE(rt_submit_aiv_task(kInc, t).task_id().is_valid());
       },
       {"EXPLICIT_ORCH_FATAL", "user says 17"}},
  };
  for (Case& c : cases) {
    SCOPED_TRACE(c.name);
    reset_state();
    expect_error(rig, c.body, c.parts);
  }
}

// A kernel failure fails its task: downstream tasks never run; the error
// names the task and the kernel.
TEST(FatalErrors, KernelFailurePropagates) {
  for (int threads : {1, 2}) {
    Rig rig({{"TASKRING_SIM_THREADS", std::to_string(threads)}});
    PTO2TaskId failing;
    std::vector<int32_t> x(8, 0);
    ChipTensor tx = ext_i32(x);
    ChipTaskArgs args;
    args.add_inout(tx);
    auto report = rig.run(
        [&](const ChipTaskArgs& a) {
          const ChipTensor& dx = *a.tensor(0);
          PTO2_SCOPE() {
            CoreTaskArgs f;
            f.add_inout(dx);
            failing = rt_submit_aiv_task(kFail, f).task_id();
            for (int i = 0; i < 5; ++i) {  // RAW chain after the failure
              CoreTaskArgs t;
              t.add_inout(dx);
              step_scalars(t, -1, -1, -1, 0, 0, 1);
              rt_submit_aiv_task(kStep2, t);
            }
            CoreTaskArgs c;  // creator-edge consumer of a task behind the failure
            TensorCreateInfo ci({4}, DataType::INT32);
            c.add_input(dx).add_output(ci).add_scalar(0);
            TaskOutputTensors r = rt_submit_aiv_task(kAdd, c);
            CoreTaskArgs d;
            d.add_inout(r.get_ref(0)).add_scalar(1);
            rt_submit_aic_task(kInc, d);
          }
        },
        args);
    ASSERT_FALSE(report.ok());
    std::string msg = report.status().message();
    EXPECT_TRUE(contains(msg, "KERNEL_FAILED")) << msg;
    char name[64];
    std::snprintf(name, sizeof(name), "task %u:%u kernel %d", failing.ring(), failing.local(), int{kFail});
    EXPECT_TRUE(contains(msg, name)) << "want '" << name << "' in: " << msg;
    EXPECT_TRUE(contains(msg, "deliberate failure")) << msg;
    EXPECT_EQ(g_calls[kFail].load(), 1);
    EXPECT_EQ(g_calls[kStep2].load(), 0) << "downstream kernels ran";
    EXPECT_EQ(g_calls[kAdd].load(), 0);
    EXPECT_EQ(g_calls[kInc].load(), 0);
    for (int v : x) EXPECT_EQ(v, 0) << "a failed run copies nothing back";
    expect_good_run(rig);
  }
}

TEST(KnobErrors, BadRingKnobsNameTheVariable) {
  struct Case {
    std::string var, value, expect;
  };
  std::vector<Case> cases = {
      {"PTO2_RING_TASK_WINDOW", "3", "PTO2_RING_TASK_WINDOW"},
      {"PTO2_RING_TASK_WINDOW", "12", "power of two"},
      {"PTO2_RING_HEAP", "10", "PTO2_RING_HEAP"},
      {"PTO2_RING_DEP_POOL", "2", "PTO2_RING_DEP_POOL"},
      {"PTO2_RING_TASK_WINDOW", "8,8,8", "PTO2_RING_TASK_WINDOW"},
      {"PTO2_RING_HEAP", "lots", "PTO2_RING_HEAP"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.var + "=" + c.value);
    Rig rig(std::map<std::string, std::string>{{c.var, c.value}});
    std::vector<int32_t> x(8, 0);
    ChipTensor tx = ext_i32(x);
    ChipTaskArgs args;
    args.add_inout(tx);
    auto report = rig.run([](const ChipTaskArgs&) {}, args);
    ASSERT_FALSE(report.ok());
    EXPECT_TRUE(contains(report.status().message(), c.expect)) << report.status().to_string();
  }
  // A bad RunConfig value is an error naming the field; the same worker then
  // runs with a good one.
  Rig rig;
  RunConfig bad;
  bad.rings.task_window = {6, 0, 0, 0};
  std::vector<int32_t> x(8, 0);
  ChipTensor tx = ext_i32(x);
  ChipTaskArgs args;
  args.add_inout(tx);
  auto report = rig.run([](const ChipTaskArgs&) {}, args, bad);
  ASSERT_FALSE(report.ok());
  EXPECT_TRUE(contains(report.status().message(), "RunConfig.task_window")) << report.status().to_string();
  expect_good_run(rig);
  // A valid four-value list works.
  Rig four({{"PTO2_RING_TASK_WINDOW", "64,32,16,8"}, {"PTO2_RING_HEAP", "65536"}});
  expect_good_run(four);
}

TEST(KnobErrors, BadRuntimeKnobsFailCreate) {
  for (auto [var, value] : {std::pair<std::string, std::string>{"TASKRING_STALL_TIMEOUT_MS", "0"},
                            {"TASKRING_TENSOR_WAIT_TIMEOUT_MS", "-5"},
                            {"TASKRING_RUN_TIMEOUT_MS", "soon"},
                            {"TASKRING_RUN_INLINE", "sometimes"},
                            {"TASKRING_SIM_THREADS", "0"},
                            {"TASKRING_SIM_CLUSTERS", "1000"}}) {
    ChipWorkerConfig cfg;
    cfg.env = map_env({{var, value}});
    auto w = ChipWorker::create(cfg);
    ASSERT_FALSE(w.ok()) << var << "=" << value;
    EXPECT_TRUE(contains(w.status().message(), var)) << w.status().to_string();
  }
}

// ---------------------------------------------------------------- shared library

TEST(OrchestrationLibrary, VectorExampleFromASharedLibrary) {
  reset_state();
  auto w = ChipWorker::create({});
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  ChipCallable c;
  c.name = "vector_so";
  c.orchestration_library = TASKRING_TEST_ORCH_LIB;
  c.kernels = {{0, taskring::testing::test_add, "", "add"},
               {1, taskring::testing::test_add_scalar, "", "add_scalar"},
               {2, taskring::testing::test_mul, "", "mul"}};
  auto id = (*w)->register_callable(c);
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  constexpr uint32_t n = 64 * 64;
  std::vector<float> a(n, 2.0f), b(n, 3.0f), f(n, 0.0f);
  ChipTensor ta = make_tensor_external(a.data(), {64, 64});
  ChipTensor tb = make_tensor_external(b.data(), {64, 64});
  ChipTensor tf = make_tensor_external(f.data(), {64, 64});
  ChipTaskArgs args;
  args.add_input(ta).add_input(tb).add_output(tf);
  for (int round = 0; round < 2; ++round) {
    std::fill(f.begin(), f.end(), 0.0f);
    auto report = (*w)->run(*id, args);
    ASSERT_TRUE(report.ok()) << report.status().to_string();
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(f[i], 47.0f) << i;
    EXPECT_EQ(report->stats.tasks_submitted, 5u);
  }
  // The library's config function is honoured.
  ChipTaskArgs few;
  few.add_input(ta);
  auto report = (*w)->run(*id, few);
  ASSERT_FALSE(report.ok());
  EXPECT_TRUE(contains(report.status().message(), "expects 3 arguments")) << report.status().to_string();
}

TEST(OrchestrationLibrary, MissingSymbolAndBadPath) {
  auto w = ChipWorker::create({});
  ASSERT_TRUE(w.ok());
  ChipCallable c;
  c.name = "broken";
  c.orchestration_library = TASKRING_TEST_ORCH_LIB;
  c.entry_symbol = "no_such_entry";
  auto id = (*w)->register_callable(c);
  ASSERT_FALSE(id.ok());
  EXPECT_TRUE(contains(id.status().message(), "no_such_entry")) << id.status().to_string();
  c.entry_symbol = "aicpu_orchestration_entry";
  c.orchestration_library = "/nonexistent/liborch.so";
  id = (*w)->register_callable(c);
  ASSERT_FALSE(id.ok());
  EXPECT_TRUE(contains(id.status().message(), "/nonexistent/liborch.so")) << id.status().to_string();
  // A kernel library that does not exist.
  ChipCallable k;
  k.orchestration_library = TASKRING_TEST_ORCH_LIB;
  k.kernels = {{3, nullptr, "/nonexistent/libkernel.so", "k"}};
  id = (*w)->register_callable(k);
  ASSERT_FALSE(id.ok());
  EXPECT_TRUE(contains(id.status().message(), "kernel 3")) << id.status().to_string();
}

}  // namespace
}  // namespace taskring::rtest
