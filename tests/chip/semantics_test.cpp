// Runtime semantics on sim: reference counts, scopes, explicit deps,
// alloc_tensors, dummy tasks, MIX and SPMD launches, get/set_tensor_data,
// topology queries. Orderings are checked through flags the kernels raise
// and read, never through timing.
#include <gtest/gtest.h>

#include <set>

#include "runtime_test_util.hpp"

namespace taskring::rtest {
namespace {

// A consumer that retains its producer (WAIT|RETAIN) keeps the producer's
// heap output alive after the scope closes: a later allocation in the same
// (one-output) heap ring must wait until the consumer finished.
TEST(RefCounts, RetainingConsumerKeepsProducerOutputAlive) {
  Rig rig;
  std::vector<int32_t> out(4, 0);
  ChipTensor tout = ext_i32(out);
  ChipTaskArgs args;
  args.add_output(tout);
  RunConfig rc;
  rc.rings.heap = {4096, 1024, 4096, 4096};  // ring 1 holds one output at a time
  std::atomic<bool> before_q{false};
  g_body = [&](const ChipTaskArgs& a) {
    const ChipTensor& o = *a.tensor(0);
    TensorCreateInfo ci({4}, DataType::INT32);
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      CoreTaskArgs p;
      p.add_output(ci).add_scalar(7);
      TaskOutputTensors rp = rt_submit_aiv_task(kFill, p);
      const ChipTensor& x = rp.get_ref(0);
      PTO2TaskId dep[1] = {rp.task_id()};
      CoreTaskArgs c;
      c.add_input(x).add_output(o);
      step_scalars(c, 0, -1, 1, 0);  // wait flag 0; record flag 1 into seen[0]
      c.set_dependencies(dep, 1);    // default WAIT|RETAIN
      rt_submit_aiv_task(kStep, c);
    }
    before_q.store(true);
    PTO2_SCOPE() {
      TensorCreateInfo y({4}, DataType::INT32);
      y.set_initial_value(int32_t{99});
      CoreTaskArgs q;
      q.add_output(y).add_scalar(1);
      rt_submit_aiv_task(kFill, q);
    }
    g_flags[1].store(1);
  };
  ASSERT_TRUE(rig.worker->prepare(rig.callable, args, rc).ok());
  ASSERT_TRUE(rig.worker->launch().ok());
  // Open the consumer's gate once the orchestrator is about to allocate Q
  // (the pause only makes a wrong early reuse likelier to show).
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!before_q.load() && std::chrono::steady_clock::now() < end) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  g_flags[0].store(1);
  auto report = rig.worker->finalize();
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  EXPECT_EQ(g_seen[0].load(), 0) << "Q was allocated while the retaining consumer still ran";
  for (int v : out) EXPECT_EQ(v, 7);
  EXPECT_GE(report->stats.orch_blocked, 1u) << "Q must have waited for the heap";
}

TEST(RefCounts, WaitOnlyDependencyDoesNotRetain) {
  Rig rig;
  std::vector<int32_t> out(4, 0);
  ChipTensor tout = ext_i32(out);
  ChipTaskArgs args;
  args.add_output(tout);
  RunConfig rc;
  rc.rings.heap = {4096, 1024, 4096, 4096};
  g_body = [&](const ChipTaskArgs& a) {
    const ChipTensor& o = *a.tensor(0);
    TensorCreateInfo ci({4}, DataType::INT32);
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      CoreTaskArgs p;
      p.add_output(ci).add_scalar(7);
      TaskOutputTensors rp = rt_submit_aiv_task(kFill, p);
      const ChipTensor& x = rp.get_ref(0);
      PTO2TaskId dep[1] = {rp.task_id()};
      DepFlags fl[1] = {DEP_WAIT};
      (void)x;
      (void)o;
      CoreTaskArgs c;  // touches no memory: x is reused once P retires
      step_scalars(c, 0, -1, 1, 0);
      c.set_dependencies_with_kinds(dep, fl, 1);
      rt_submit_aiv_task(kStep, c);
    }
    PTO2_SCOPE() {
      TensorCreateInfo y({4}, DataType::INT32);
      CoreTaskArgs q;
      q.add_output(y).add_scalar(1);
      rt_submit_aiv_task(kFill, q);
    }
    g_flags[1].store(1);
  };
  ASSERT_TRUE(rig.worker->prepare(rig.callable, args, rc).ok());
  ASSERT_TRUE(rig.worker->launch().ok());
  // Without RETAIN the producer retires at scope end, so Q's allocation
  // returns while the consumer is still gated.
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (g_flags[1].load() == 0 && std::chrono::steady_clock::now() < end) std::this_thread::yield();
  EXPECT_EQ(g_flags[1].load(), 1) << "Q's allocation did not return while the WAIT-only consumer was gated";
  g_flags[0].store(1);
  auto report = rig.worker->finalize();
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  EXPECT_EQ(g_seen[0].load(), 1);
}

TEST(Scopes, NestedAutoScopesOnAllRings) {
  Rig rig;
  std::vector<int32_t> x(8, 0);
  ChipTensor tx = ext_i32(x);
  ChipTaskArgs args;
  args.add_inout(tx);
  std::vector<uint32_t> rings;
  auto report = rig.run(
      [&](const ChipTaskArgs& a) {
        const ChipTensor& dx = *a.tensor(0);
        std::function<void(int)> nest = [&](int depth) {
          CoreTaskArgs t;
          t.add_inout(dx).add_scalar(depth);
          rings.push_back(rt_submit_aiv_task(kInc, t).task_id().ring());
          if (depth < 6) {
            PTO2_SCOPE() { nest(depth + 1); }
          }
          CoreTaskArgs u;
          u.add_inout(dx).add_scalar(100);
          rings.push_back(rt_submit_aiv_task(kInc, u).task_id().ring());
        };
        nest(0);
      },
      args);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  for (int v : x) EXPECT_EQ(v, 0 + 1 + 2 + 3 + 4 + 5 + 6 + 7 * 100);
  EXPECT_EQ(std::set<uint32_t>(rings.begin(), rings.end()), (std::set<uint32_t>{0, 1, 2, 3}))
      << "ring = min(scope depth, 3)";
}

// MANUAL scopes skip inference entirely, creator edges included: a consumer
// of a gated producer's output runs first and opens the producer's gate.
TEST(Scopes, ManualScopeSkipsInferenceIncludingCreatorEdges) {
  Rig rig;
  std::vector<int32_t> x(4, 0);
  ChipTensor tx = ext_i32(x);
  ChipTaskArgs args;
  args.add_inout(tx);
  auto report = rig.run(
      [&](const ChipTaskArgs& a) {
        const ChipTensor& dx = *a.tensor(0);
        PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
          CoreTaskArgs p;
          p.add_inout(dx);
          step_scalars(p, /*wait*/ 0, -1, -1, 0, 0, /*delta*/ 1);
          TaskOutputTensors rp = rt_submit_aiv_task(kStep, p);
          CoreTaskArgs c;  // same tensor, INOUT, no explicit dep
          c.add_inout(dx);
          step_scalars(c, -1, /*raise*/ 0, -1, 0, 0, 0);
          rt_submit_aiv_task(kStep2, c);
          // With an explicit dependency the order is kept.
          PTO2TaskId dep[1] = {rp.task_id()};
          CoreTaskArgs d;
          d.add_inout(dx);
          step_scalars(d, -1, -1, -1, 0, 0, 10);
          d.set_dependencies(dep, 1);
          rt_submit_aiv_task(kStep, d);
        }
      },
      args);
  ASSERT_TRUE(report.ok()) << "inference in a MANUAL scope would have deadlocked the gate: "
                           << report.status().to_string();
  for (int v : x) EXPECT_EQ(v, 11);
}

// manual_dep tensors skip the TensorMap but keep the creator edge.
TEST(Scopes, ManualDepTensorsKeepOnlyCreatorEdges) {
  Rig rig;
  std::vector<int32_t> x(4, 5), y(4, 0);
  ChipTensor tx = ext_i32(x), ty = ext_i32(y);
  ChipTaskArgs args;
  args.add_inout(tx).add_output(ty);
  auto report = rig.run(
      [&](const ChipTaskArgs& a) {
        ChipTensor dx = *a.tensor(0);
        const ChipTensor& dy = *a.tensor(1);
        // Writer of x gated on flag 0; a manual_dep reader of x does not
        // wait for it and opens the gate.
        CoreTaskArgs w;
        w.add_inout(dx);
        step_scalars(w, 0, -1, -1, 0, 0, 1);
        rt_submit_aiv_task(kStep, w);
        ChipTensor mx = dx;
        mx.manual_dep = true;
        CoreTaskArgs r;
        r.add_input(mx);
        step_scalars(r, -1, 0, -1, 0, 0, 0);
        rt_submit_aiv_task(kStep2, r);
        // Creator edge through a manual_dep OUTPUT.
        TensorCreateInfo ci({4}, DataType::INT32, /*manual*/ true);
        CoreTaskArgs p;
        p.add_output(ci).add_scalar(3);
        TaskOutputTensors rp = rt_submit_aiv_task(kFill, p);
        EXPECT_TRUE(rp.get_ref(0).manual_dep);
        CoreTaskArgs c;
        c.add_input(rp.get_ref(0)).add_output(dy);
        step_scalars(c, -1, -1, -1, 0, 0, 0);
        rt_submit_aiv_task(kStep, c);
      },
      args);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  for (int v : x) EXPECT_EQ(v, 6);
  for (int v : y) EXPECT_EQ(v, 3);
}

TEST(Scopes, AutoInsideManualIsAnError) {
  Rig rig;
  std::vector<int32_t> x(4, 0);
  ChipTensor tx = ext_i32(x);
  ChipTaskArgs args;
  args.add_inout(tx);
  auto report = rig.run(
      [&](const ChipTaskArgs&) {
        PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
          PTO2_SCOPE(PTO2ScopeMode::AUTO) {}
        }
      },
      args);
  ASSERT_FALSE(report.ok());
  EXPECT_TRUE(contains(report.status().message(), "INVALID_ARGS")) << report.status().to_string();
  EXPECT_TRUE(contains(report.status().message(), "AUTO scope inside a MANUAL")) << report.status().to_string();
  expect_good_run(rig);
}

TEST(AllocTensors, OutputsCompleteAtOnceWithInitialValue) {
  Rig rig;
  std::vector<int32_t> y(6, 0);
  ChipTensor ty = ext_i32(y);
  ChipTaskArgs args;
  args.add_output(ty);
  int32_t first = -1;
  auto report = rig.run(
      [&](const ChipTaskArgs& a) {
        TensorCreateInfo ci({6}, DataType::INT32);
        ci.set_initial_value(int32_t{40});
        TaskOutputTensors r = alloc_tensors(ci);
        ASSERT_TRUE(r.task_id().is_valid());
        first = get_tensor_data<int32_t>(r.get_ref(0), 1, std::array<uint32_t, 1>{0}.data());
        CoreTaskArgs inc;
        inc.add_inout(r.get_ref(0)).add_scalar(2);
        rt_submit_aiv_task(kInc, inc);
        CoreTaskArgs cp;
        cp.add_input(r.get_ref(0)).add_output(*a.tensor(0)).add_scalar(0);
        rt_submit_aiv_task(kAdd, cp);
      },
      args);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  EXPECT_EQ(first, 40);
  for (int v : y) EXPECT_EQ(v, 42);
  EXPECT_EQ(report->stats.alloc_tasks, 1u);
  EXPECT_EQ(report->stats.tasks_submitted, 3u);
  EXPECT_GE(report->stats.heap_bytes, 1024u);
}

// A dummy task joins two producers for a consumer in a MANUAL scope.
TEST(DummyTasks, BarrierOrdersWithoutRunning) {
  Rig rig;
  std::vector<int32_t> x(4, 0);
  ChipTensor tx = ext_i32(x);
  ChipTaskArgs args;
  args.add_inout(tx);
  auto report = rig.run(
      [&](const ChipTaskArgs& a) {
        const ChipTensor& dx = *a.tensor(0);
        PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
          CoreTaskArgs p1;
          step_scalars(p1, -1, 0, -1, 0, 2000, 0);
          TaskOutputTensors r1 = rt_submit_aiv_task(kStep, p1);
          CoreTaskArgs p2;
          step_scalars(p2, -1, 1, -1, 0, 2000, 0);
          TaskOutputTensors r2 = rt_submit_aic_task(kStep, p2);
          CoreTaskArgsWithDeps<> d;
          d.add_dep(r1.task_id()).add_dep_wait(r2.task_id());
          TaskOutputTensors rd = rt_submit_dummy_task(d);
          CoreTaskArgs c;
          c.add_inout(dx);
          step_scalars(c, -1, -1, 0, 0, 0, 1);
          PTO2TaskId dep[1] = {rd.task_id()};
          c.set_dependencies(dep, 1);
          rt_submit_aiv_task(kStep2, c);
          CoreTaskArgs c2;
          step_scalars(c2, -1, -1, 1, 1, 0, 0);
          c2.set_dependencies(dep, 1);
          rt_submit_aiv_task(kStep2, c2);
        }
      },
      args);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  EXPECT_EQ(g_seen[0].load(), 1);
  EXPECT_EQ(g_seen[1].load(), 1);
  EXPECT_EQ(g_calls[kStep].load(), 2);
  EXPECT_EQ(g_calls[kStep2].load(), 2);
  EXPECT_EQ(report->stats.dummy_tasks, 1u);
  EXPECT_EQ(report->stats.kernel_calls, 4u) << "the dummy never reaches a core";
  for (int v : x) EXPECT_EQ(v, 1);
}

TEST(MixTasks, EveryBlockOccupiesOneClusterAndSeesItsSlots) {
  Rig rig({{"TASKRING_SIM_CLUSTERS", "3"}, {"TASKRING_SIM_THREADS", "2"}});
  std::vector<int32_t> x(1, 0);
  ChipTensor tx = ext_i32(x);
  ChipTaskArgs args;
  args.add_inout(tx);
  auto report = rig.run(
      [&](const ChipTaskArgs&) {
        CoreTaskArgs t;
        t.launch_spec.set_block_num(4);
        rt_submit_task(MixedKernels{kRecord, kRecord2, kRecord2}, t);
      },
      args);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  EXPECT_EQ(report->stats.kernel_calls, 12u);
  std::lock_guard<std::mutex> lock(g_record_mu);
  ASSERT_EQ(g_launches.size(), 12u);
  for (int b = 0; b < 4; ++b) {
    int aic = -1, aiv[2] = {-1, -1}, n = 0;
    for (const Launch& l : g_launches) {
      if (l.block_idx != b) continue;
      ++n;
      EXPECT_EQ(l.block_num, 4);
      EXPECT_EQ(l.cluster_count, 3);
      EXPECT_EQ(l.aiv_count, 6);
      if (l.func_id == kRecord) {
        EXPECT_EQ(l.core_type, TASKRING_CORE_AIC);
        EXPECT_EQ(l.sub_block_id, 0);
        aic = l.core_id;
      } else {
        EXPECT_EQ(l.core_type, TASKRING_CORE_AIV);
        ASSERT_TRUE(l.sub_block_id == 0 || l.sub_block_id == 1);
        aiv[l.sub_block_id] = l.core_id;
      }
    }
    ASSERT_EQ(n, 3) << "block " << b;
    ASSERT_GE(aic, 0);
    ASSERT_LT(aic, 3);
    EXPECT_EQ(aiv[0], 3 + 2 * aic) << "AIV0 of the same cluster";
    EXPECT_EQ(aiv[1], 3 + 2 * aic + 1) << "AIV1 of the same cluster";
  }
}

TEST(Spmd, EveryBlockRunsExactlyOnceAndSeesItsIndex) {
  for (int threads : {1, 2, 4}) {
    Rig rig({{"TASKRING_SIM_THREADS", std::to_string(threads)}, {"TASKRING_SIM_CLUSTERS", "4"}});
    std::vector<int32_t> y(50, -1);
    ChipTensor ty = ext_i32(y);
    ChipTaskArgs args;
    args.add_output(ty);
    auto report = rig.run(
        [&](const ChipTaskArgs& a) {
          CoreTaskArgs rec;
          rec.launch_spec.set_block_num(7);
          rt_submit_aiv_task(kRecord, rec);
          CoreTaskArgs f;  // each block fills its share of y
          f.add_output(*a.tensor(0)).add_scalar(9);
          f.launch_spec.set_block_num(5);
          rt_submit_aic_task(kFill, f);
        },
        args);
    ASSERT_TRUE(report.ok()) << report.status().to_string();
    for (int v : y) EXPECT_EQ(v, 9);
    EXPECT_EQ(g_calls[kFill].load(), 5);
    std::lock_guard<std::mutex> lock(g_record_mu);
    std::multiset<int> blocks;
    for (const Launch& l : g_launches) {
      blocks.insert(l.block_idx);
      EXPECT_EQ(l.block_num, 7);
      EXPECT_EQ(l.core_type, TASKRING_CORE_AIV);
    }
    EXPECT_EQ(blocks, (std::multiset<int>{0, 1, 2, 3, 4, 5, 6})) << threads << " threads";
  }
}

void expect_get_waits_for_writers_set_for_readers(Rig& rig) {
  std::vector<int32_t> x(4, 1), y(4, 0), z(4, 0);
  ChipTensor tx = ext_i32(x), ty = ext_i32(y), tz = ext_i32(z);
  ChipTaskArgs args;
  args.add_inout(tx).add_output(ty).add_output(tz);
  int32_t got = -1, got_out = -1;
  auto report = rig.run(
      [&](const ChipTaskArgs& a) {
        const ChipTensor &dx = *a.tensor(0), &dy = *a.tensor(1), &dz = *a.tensor(2);
        uint32_t i2 = 2;
        CoreTaskArgs w;  // x += 4 after a pause
        w.add_inout(dx);
        step_scalars(w, -1, -1, -1, 0, 3000, 4);
        rt_submit_aiv_task(kStep, w);
        got = get_tensor_data<int32_t>(dx, 1, &i2);
        CoreTaskArgs r;  // y = x after a pause; must read 5, not the 50 set below
        r.add_input(dx).add_output(dy);
        step_scalars(r, -1, -1, -1, 0, 3000, 0);
        rt_submit_aiv_task(kStep, r);
        set_tensor_data<int32_t>(dx, 1, &i2, 50);
        CoreTaskArgs r2;  // z = x, after the write
        r2.add_input(dx).add_output(dz);
        step_scalars(r2, -1, -1, -1, 0, 0, 0);
        rt_submit_aiv_task(kStep, r2);
        // A runtime OUTPUT: get waits for its creator.
        TensorCreateInfo ci({3}, DataType::INT32);
        CoreTaskArgs ff;
        ff.add_output(ci).add_scalar(77);
        TaskOutputTensors rf = rt_submit_aiv_task(kFill, ff);
        uint32_t i1 = 1;
        got_out = get_tensor_data<int32_t>(rf.get_ref(0), 1, &i1);
      },
      args);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  EXPECT_EQ(got, 5);
  EXPECT_EQ(got_out, 77);
  EXPECT_EQ(y, (std::vector<int32_t>{5, 5, 5, 5}));
  EXPECT_EQ(z, (std::vector<int32_t>{5, 5, 50, 5}));
  EXPECT_EQ(x, (std::vector<int32_t>{5, 5, 50, 5}));
}

TEST(TensorData, GetWaitsForWritersSetWaitsForReaders) {
  Rig rig;
  expect_get_waits_for_writers_set_for_readers(rig);
}

// Inline (TASKRING_RUN_INLINE): nobody else runs the producers, so get and
// set run them on the orchestrating thread before they read or write.
TEST(TensorData, InlineRunServesGetAndSetOnTheOrchestratingThread) {
  Rig rig(std::map<std::string, std::string>{{"TASKRING_RUN_INLINE", "1"}});
  expect_get_waits_for_writers_set_for_readers(rig);
}

TEST(Topology, AvailableCountsFollowTheSimKnobs) {
  Rig rig({{"TASKRING_SIM_CLUSTERS", "5"}, {"TASKRING_SIM_THREADS", "2"}});
  std::vector<int32_t> x(1, 0);
  ChipTensor tx = ext_i32(x);
  ChipTaskArgs args;
  args.add_inout(tx);
  int clusters = -1, aivs = -1;
  auto report = rig.run(
      [&](const ChipTaskArgs&) {
        clusters = rt_available_cluster_count();
        aivs = rt_available_aiv_count();
      },
      args);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  EXPECT_EQ(clusters, 5);
  EXPECT_EQ(aivs, 10);
}

// The orchestration sees each entry tensor with the caller's tag (it saw
// every one as INPUT before, so it could not tell what it may write).
TEST(EntryArgs, TheOrchestrationSeesTheCallersTags) {
  Rig rig;
  std::vector<int32_t> a(1, 0), b(1, 0), c(1, 0), d(1, 0);
  ChipTensor ta = ext_i32(a), tb = ext_i32(b), tc = ext_i32(c), td = ext_i32(d);
  ChipTaskArgs args;
  args.add_input(ta);
  args.add_inout(tb);
  args.add_output(tc);
  args.add_no_dep(td);
  std::vector<TensorArgType> seen;
  auto report = rig.run(
      [&](const ChipTaskArgs& orch_args) {
        for (int i = 0; i < orch_args.tensor_count(); ++i) seen.push_back(orch_args.tag(i));
      },
      args);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  const std::vector<TensorArgType> want = {TensorArgType::INPUT, TensorArgType::INOUT, TensorArgType::OUTPUT_EXISTING,
                                           TensorArgType::NO_DEP};
  EXPECT_EQ(seen, want);
}

}  // namespace
}  // namespace taskring::rtest
