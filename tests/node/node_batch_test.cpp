// Batched dispatch with real forked chips (docs/node.md "Dispatch"): tasks
// that one scheduling pass makes ready for a chip reach its child as one
// batch, and a task that fails inside a batch fails the run naming it while
// the batch's other tasks give their results. Every wait has a deadline.
#include <gtest/gtest.h>

#include "node_test_util.hpp"

namespace taskring::node::testing {
namespace {

constexpr int kAddScalar = 0;
constexpr int kGateSub = 0;
constexpr uint32_t kN = 256;

std::unique_ptr<NodeWorker> make_worker() {
  auto w = std::make_unique<NodeWorker>(small_node(1, 1));
  EXPECT_EQ(*w->register_chip(add_scalar_callable()), kAddScalar);
  EXPECT_EQ(*w->register_sub("gate", [](const ChipTaskArgs& a) { return gate_pass(gate_at(a.scalar(0))); }), kGateSub);
  return w;
}

struct Rig {
  std::unique_ptr<NodeWorker> w = make_worker();
  Gate* gate = nullptr;
  ChipTensor x;  // what the SUB "produces" and every chip task reads
  std::vector<ChipTensor> y;

  explicit Rig(int outputs) {
    Status s = w->init();
    EXPECT_TRUE(s.ok()) << s.to_string();
    gate = new (*w->alloc_shared(sizeof(Gate))) Gate();
    float* xp = static_cast<float*>(*w->alloc_shared(kN * 4));
    for (uint32_t i = 0; i < kN; ++i) xp[i] = static_cast<float>(i);
    x = make_tensor_external(xp, {1, kN});
    for (int i = 0; i < outputs; ++i) y.push_back(make_tensor_external(*w->alloc_shared(kN * 4), {1, kN}));
  }
  // The SUB task writes x (a gate holds it until the test opens it), so
  // every chip task reading x waits for it and becomes ready in one pass.
  Status submit_producer(Orchestrator& o) {
    ChipTaskArgs p;
    p.add_inout(x).add_scalar(reinterpret_cast<uintptr_t>(gate));
    return o.submit_sub(kGateSub, p);
  }
  // y[out] = in + add; `fail`: the task fails on the chip.
  static Status add(Orchestrator& o, const ChipTensor& in, const ChipTensor& out, float add, bool fail = false) {
    ChipTaskArgs a;
    a.add_input(in).add_output(out).add_scalar(f32_bits(add)).add_scalar(uint64_t{fail ? 1u : 0u});
    return o.submit_next_level(kAddScalar, a, 0);
  }
  void expect_y(int i, float add) {
    const float* yp = y[static_cast<size_t>(i)].data<float>();
    for (uint32_t k = 0; k < kN; ++k) ASSERT_EQ(yp[k], static_cast<float>(k) + add) << "y" << i << "[" << k << "]";
  }
};

TEST(NodeBatch, TasksReadyTogetherReachTheChipInOneDispatch) {
  constexpr int kTasks = 6;
  Rig r(kTasks);
  ASSERT_TRUE(r.w->take_chip_run_totals(0).ok());  // start counting here
  RunHandle h = r.w->submit([&](Orchestrator& o) -> Status {
    TASKRING_RETURN_IF_ERROR(r.submit_producer(o));
    for (int i = 0; i < kTasks; ++i) TASKRING_RETURN_IF_ERROR(Rig::add(o, r.x, r.y[i], 1.0f + i));
    return Status::Ok();
  });
  ASSERT_TRUE(wait_started(r.gate, 1).ok());
  open_gate(r.gate);
  Status s = h.wait(Deadline::after_ms(30000));
  ASSERT_TRUE(s.ok()) << s.to_string();
  auto t = r.w->take_chip_run_totals(0);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->runs, static_cast<uint64_t>(kTasks));
  EXPECT_EQ(t->dispatches, 1u) << "one pass made all " << kTasks << " ready: one batch";
  for (int i = 0; i < kTasks; ++i) r.expect_y(i, 1.0f + i);
  EXPECT_TRUE(r.w->close().ok());
}

// Batch on chip 0: y0, y1 (independent), y2 (fails), y3 (reads y2: queued
// behind it, not run), y4 (independent). The run fails naming y2's task;
// y0, y1 and y4 are right; y3's task is skipped.
TEST(NodeBatch, AFailureInsideABatchFailsTheRunNamingTheTaskAndTheOthersAreRight) {
  Rig r(5);
  float* y3 = r.y[3].data<float>();
  for (uint32_t k = 0; k < kN; ++k) y3[k] = -1.0f;
  RunHandle h = r.w->submit([&](Orchestrator& o) -> Status {
    TASKRING_RETURN_IF_ERROR(r.submit_producer(o));           // task 0
    TASKRING_RETURN_IF_ERROR(Rig::add(o, r.x, r.y[0], 1.0f));  // task 1
    TASKRING_RETURN_IF_ERROR(Rig::add(o, r.x, r.y[1], 2.0f));  // task 2
    TASKRING_RETURN_IF_ERROR(Rig::add(o, r.x, r.y[2], 3.0f, /*fail=*/true));  // task 3
    TASKRING_RETURN_IF_ERROR(Rig::add(o, r.y[2], r.y[3], 4.0f));             // task 4
    return Rig::add(o, r.x, r.y[4], 5.0f);                                   // task 5
  });
  ASSERT_TRUE(wait_started(r.gate, 1).ok());
  ASSERT_TRUE(r.w->take_chip_run_totals(0).ok());
  open_gate(r.gate);
  Status s = h.wait(Deadline::after_ms(30000));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("task 3 (chip 0"), std::string::npos) << s.message();
  EXPECT_EQ(h.counts().failed, 1u);
  EXPECT_EQ(h.counts().skipped, 1u);
  EXPECT_EQ(h.counts().completed, 4u);  // the SUB and three chip tasks
  r.expect_y(0, 1.0f);
  r.expect_y(1, 2.0f);
  r.expect_y(4, 5.0f);
  for (uint32_t k = 0; k < kN; ++k) ASSERT_EQ(y3[k], -1.0f) << "task 4 never ran";
  auto t = r.w->take_chip_run_totals(0);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->dispatches, 1u) << "tasks 1-5 went out together";
  // The worker stays usable.
  EXPECT_TRUE(r.w->run([&](Orchestrator& o) { return Rig::add(o, r.x, r.y[3], 6.0f); }).ok());
  r.expect_y(3, 6.0f);
  EXPECT_TRUE(r.w->close().ok());
}

// Two groups on chips {0, 1}: the first's member on chip 1 fails; the
// second is independent but queued behind it through its gate, so neither
// of its members runs (the run's comm domains abort on the first error
// anyway); it counts as skipped, and its outputs stay untouched.
TEST(NodeBatch, AGroupQueuedBehindAFailedGroupRunsOnNoChip) {
  NodeWorker w(small_node(2, 0));
  ASSERT_EQ(*w.register_chip(add_scalar_callable()), kAddScalar);
  ASSERT_EQ(*w.register_chip(gate_callable()), 1);
  ASSERT_TRUE(w.init().ok());
  Gate* gate = new (*w.alloc_shared(sizeof(Gate))) Gate();
  ChipTensor x = make_tensor_external(*w.alloc_shared(kN * 4), {1, kN});
  std::vector<ChipTensor> y;
  for (int i = 0; i < 4; ++i) {
    y.push_back(make_tensor_external(*w.alloc_shared(kN * 4), {1, kN}));
    for (uint32_t k = 0; k < kN; ++k) y.back().data<float>()[k] = -1.0f;
  }
  const int chips[] = {0, 1};
  RunHandle h = w.submit([&](Orchestrator& o) -> Status {
    // Holds chip 0, so both groups are queued before either runs.
    ChipTaskArgs g;
    g.add_scalar(reinterpret_cast<uintptr_t>(gate));
    TASKRING_RETURN_IF_ERROR(o.submit_next_level(1, g, 0));
    ChipTaskArgs a0, a1, b0, b1;
    a0.add_input(x).add_output(y[0]).add_scalar(f32_bits(1.0f)).add_scalar(uint64_t{0});
    a1.add_input(x).add_output(y[1]).add_scalar(f32_bits(1.0f)).add_scalar(uint64_t{1});  // fails
    b0.add_input(x).add_output(y[2]).add_scalar(f32_bits(2.0f)).add_scalar(uint64_t{0});
    b1.add_input(x).add_output(y[3]).add_scalar(f32_bits(2.0f)).add_scalar(uint64_t{0});
    const ChipTaskArgs* ga[] = {&a0, &a1};
    const ChipTaskArgs* gb[] = {&b0, &b1};
    TASKRING_RETURN_IF_ERROR(o.submit_next_level_group(kAddScalar, ga, chips));
    return o.submit_next_level_group(kAddScalar, gb, chips);
  });
  ASSERT_TRUE(wait_started(gate, 1).ok());
  open_gate(gate);
  Status s = h.wait(Deadline::after_ms(30000));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("task 1 (chips 0,1"), std::string::npos) << s.message();
  EXPECT_EQ(h.counts().failed, 1u);
  EXPECT_EQ(h.counts().skipped, 1u);
  for (int i : {2, 3})
    for (uint32_t k = 0; k < kN; ++k) ASSERT_EQ(y[static_cast<size_t>(i)].data<float>()[k], -1.0f) << "y" << i;
  EXPECT_TRUE(w.close().ok());
}

}  // namespace
}  // namespace taskring::node::testing
