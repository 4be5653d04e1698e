// The chip child's serving of its task queue with real forked chips, on a
// threaded and on an inline chip (docs/architecture.md, "The L3 route of
// one task"): each chip task is one L2 run of the child's ChipWorker, so
// how an L2 run starts and ends (which thread orchestrates, which threads
// are woken) is on every task's path. These tests pin what any change there
// must keep: a run of more chip tasks than the queue has slots completes in
// order with every output right; a chip task whose kernel never returns
// ends at the chip's run timeout with the chip's own error, leaving the chip
// usable; and one whose serving thread is stuck inside the task (its
// orchestration never returns: the serving thread orchestrates every chip
// task, threaded or inline) is killed by the parent's task watch, the run
// failing with an error that names the chip, the task and the timeout.
// Every wait has a deadline.
#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>

#include "node_test_util.hpp"

namespace taskring::node::testing {
namespace {

constexpr int kAddScalar = 0;
constexpr int kGate = 1;
constexpr int kGateInKernel = 2;
// A func id of the tests' own (the built-in ones start at 896).
constexpr int32_t kGateKernelId = 7;
constexpr uint32_t kN = 64;
// More than the child's queue holds (kTaskSlots = 16): the parent refills
// slots the child has finished while the child works through the others.
constexpr int kIndependent = 40;
constexpr int kChain = 24;

// Kernel: passes the Gate at its scalar 0 (it has no tensors).
void gate_kernel(int64_t* args) { (void)gate_pass(gate_at(static_cast<uint64_t>(args[0]))); }

// Chip entry: scalar 1 independent AIV tasks of gate_kernel with the Gate
// at scalar 0, so the orchestration returns and the kernels block.
void gate_in_kernel_entry(const ChipTaskArgs& args) {
  for (uint64_t i = 0; i < args.scalar(1); ++i) {
    CoreTaskArgs t;
    const uint64_t g = args.scalar(0);
    t.add_scalars(&g, 1);
    rt_submit_aiv_task(kGateKernelId, t);
  }
}

ChipCallable gate_in_kernel_callable() {
  ChipCallable c;
  c.name = "gate_in_kernel";
  c.entry = gate_in_kernel_entry;
  c.kernels = {KernelBinding{kGateKernelId, gate_kernel, "", "gate_kernel"}};
  return c;
}

std::unique_ptr<NodeWorker> make_chip(NodeConfig::ChipInline mode, EnvLookup env = process_env()) {
  NodeConfig cfg;
  cfg.chip_inline = mode;
  cfg.env = std::move(env);
  auto w = std::make_unique<NodeWorker>(small_node(1, 0, cfg));
  EXPECT_EQ(*w->register_chip(add_scalar_callable()), kAddScalar);
  EXPECT_EQ(*w->register_chip(gate_callable()), kGate);
  EXPECT_EQ(*w->register_chip(gate_in_kernel_callable()), kGateInKernel);
  Status s = w->init();
  EXPECT_TRUE(s.ok()) << s.to_string();
  return w;
}

ChipTensor shared_row(NodeWorker& w, float fill) {
  auto p = w.alloc_shared(kN * 4);
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  float* f = static_cast<float*>(*p);
  for (uint32_t k = 0; k < kN; ++k) f[k] = fill;
  return make_tensor_external(f, {1, kN});
}

Status add(Orchestrator& o, const ChipTensor& in, const ChipTensor& out, float value) {
  ChipTaskArgs a;
  a.add_input(in).add_output(out).add_scalar(f32_bits(value)).add_scalar(uint64_t{0});
  return o.submit_next_level(kAddScalar, a, 0);
}

class ChipServe : public ::testing::TestWithParam<NodeConfig::ChipInline> {};

// 40 independent tasks (y[i] = x + i) and a chain of 24 that ping-pongs
// between two rows (each adds 1 to what the one before wrote), submitted
// interleaved in one run: 64 L2 runs on one chip, four times its queue.
TEST_P(ChipServe, MoreChipTasksThanQueueSlotsCompleteInOrderWithTheirOutputs) {
  auto w = make_chip(GetParam());
  ChipTensor x = shared_row(*w, 0.0f);
  for (uint32_t k = 0; k < kN; ++k) x.data<float>()[k] = static_cast<float>(k);
  std::vector<ChipTensor> y;
  for (int i = 0; i < kIndependent; ++i) y.push_back(shared_row(*w, -1.0f));
  ChipTensor ping = shared_row(*w, 0.0f), pong = shared_row(*w, -1.0f);
  ASSERT_TRUE(w->take_chip_run_totals(0).ok());  // count from here
  Status s = w->run(
      [&](Orchestrator& o) -> Status {
        for (int i = 0; i < std::max(kIndependent, kChain); ++i) {
          if (i < kIndependent) TASKRING_RETURN_IF_ERROR(add(o, x, y[static_cast<size_t>(i)], static_cast<float>(i)));
          if (i < kChain) TASKRING_RETURN_IF_ERROR(i % 2 == 0 ? add(o, ping, pong, 1.0f) : add(o, pong, ping, 1.0f));
        }
        return Status::Ok();
      },
      Deadline::after_ms(60000));
  ASSERT_TRUE(s.ok()) << s.to_string();
  for (int i = 0; i < kIndependent; ++i)
    for (uint32_t k = 0; k < kN; ++k)
      ASSERT_EQ(y[static_cast<size_t>(i)].data<float>()[k], static_cast<float>(k) + static_cast<float>(i))
          << "y" << i << "[" << k << "]";
  // kChain is even: the last task wrote ping, one add per task.
  for (uint32_t k = 0; k < kN; ++k) ASSERT_EQ(ping.data<float>()[k], static_cast<float>(kChain)) << "ping[" << k << "]";
  auto t = w->take_chip_run_totals(0);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->runs, static_cast<uint64_t>(kIndependent + kChain)) << "one L2 run per chip task";
  EXPECT_EQ(t->tasks_completed, static_cast<uint64_t>(kIndependent + kChain)) << "one L2 task per run";
  EXPECT_TRUE(w->close().ok());
}

INSTANTIATE_TEST_SUITE_P(Chip, ChipServe,
                         ::testing::Values(NodeConfig::ChipInline::kOff, NodeConfig::ChipInline::kOn),
                         [](const auto& info) {
                           return info.param == NodeConfig::ChipInline::kOn ? std::string("Inline")
                                                                            : std::string("Threaded");
                         });

// The chip knobs of the stall tests: the task watch kills a chip whose task
// runs past 300 + 200 + 1000 ms (NodeWorker's kChipAnswerSlackMs).
EnvLookup stall_env() { return map_env({{"TASKRING_RUN_TIMEOUT_MS", "300"}, {"TASKRING_STALL_TIMEOUT_MS", "200"}}); }

// Runs one chip task that passes `g` (its orchestration waits on the gate,
// on the chip's serving thread) and checks that the parent's task watch
// killed the chip: the run fails with UNAVAILABLE naming the chip, the task
// and the timeout well before the run's own deadline (8 s; the gate gives
// up after 10), the child is reaped, and the chip stays failed.
void expect_the_watch_kills_a_stuck_chip(NodeWorker& w, Gate* g) {
  const pid_t pid = w.chip_pid(0);
  const uint64_t t0 = mono_ns();
  Status s = w.run(
      [&](Orchestrator& o) {
        ChipTaskArgs a;
        a.add_scalar(reinterpret_cast<uintptr_t>(g));
        return o.submit_next_level(kGate, a, 0);
      },
      Deadline::after_ms(8000));
  const uint64_t took_ms = (mono_ns() - t0) / 1'000'000;
  ::testing::Test::RecordProperty("took_ms", static_cast<int>(took_ms));
  ::testing::Test::RecordProperty("error", s.message());
  EXPECT_LT(took_ms, 8000u) << "the run's own deadline ended it";
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.to_string();
  EXPECT_NE(s.message().find("chip 0 (pid " + std::to_string(pid) + ") ran one chip task for"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("task 0 (chip 0, callable 'gate')"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("TASKRING_RUN_TIMEOUT_MS=300"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("killed it"), std::string::npos) << s.message();
  EXPECT_EQ(g->ran.load(), 0u) << "the orchestration returned: nothing was stuck";
  // Reaped by the parent (a zombie would still take signal 0).
  EXPECT_TRUE(kill(pid, 0) == -1 && errno == ESRCH) << "chip 0 (pid " << pid << ") was not reaped";
  // A dead chip stays dead: the next run fails at once, naming why.
  ChipTensor x = shared_row(w, 2.0f), y = shared_row(w, -1.0f);
  Status next = w.run([&](Orchestrator& o) { return add(o, x, y, 3.0f); }, Deadline::after_ms(8000));
  EXPECT_EQ(next.code(), StatusCode::kUnavailable) << next.to_string();
  EXPECT_NE(next.message().find("ran one chip task for"), std::string::npos) << next.message();
  open_gate(g);
  EXPECT_TRUE(w.close().ok());
}

// A fresh node after the one whose chip was killed: its chip serves a run.
void expect_a_fresh_node_works(NodeConfig::ChipInline mode) {
  auto w = make_chip(mode, stall_env());
  ChipTensor x = shared_row(*w, 2.0f), y = shared_row(*w, -1.0f);
  Status s = w->run([&](Orchestrator& o) { return add(o, x, y, 3.0f); }, Deadline::after_ms(20000));
  ASSERT_TRUE(s.ok()) << s.to_string();
  for (uint32_t k = 0; k < kN; ++k) ASSERT_EQ(y.data<float>()[k], 5.0f) << "y[" << k << "]";
  EXPECT_TRUE(w->close().ok());
}

// Either chip orchestrates on its serving thread (an inline one always, a
// threaded one with RunConfig::orchestrate_here): an orchestration that
// never returns holds it, so the chip cannot end the run itself. The
// parent's task watch kills it past its run timeout.
class ChipServeStall : public ::testing::TestWithParam<NodeConfig::ChipInline> {};

TEST_P(ChipServeStall, AChipTaskWhoseOrchestrationNeverReturnsIsKilledByTheParentNamingIt) {
  auto w = make_chip(GetParam(), stall_env());
  expect_the_watch_kills_a_stuck_chip(*w, new (*w->alloc_shared(sizeof(Gate))) Gate());
  expect_a_fresh_node_works(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Chip, ChipServeStall,
                         ::testing::Values(NodeConfig::ChipInline::kOff, NodeConfig::ChipInline::kOn),
                         [](const auto& info) {
                           return info.param == NodeConfig::ChipInline::kOn ? std::string("Inline")
                                                                            : std::string("Threaded");
                         });

// A threaded chip whose kernel never returns, in a run of two tasks (its
// executors run them; the orchestration returned): the chip ends the run
// itself at TASKRING_RUN_TIMEOUT_MS (+ its stall budget to stop it) with its
// own error, before the parent's watch would kill it, and serves the next
// run. (A run of one task runs on the serving thread, RunConfig::
// orchestrate_here: a kernel stuck there is ended by the watch, as above.)
TEST(ChipServeKernelStall, AThreadedChipTaskWhoseKernelNeverReturnsEndsAtTheRunTimeoutAndTheChipServesOn) {
  auto w = make_chip(NodeConfig::ChipInline::kOff, stall_env());
  Gate* g = new (*w->alloc_shared(sizeof(Gate))) Gate();
  const pid_t pid = w->chip_pid(0);
  Status s = w->run(
      [&](Orchestrator& o) {
        ChipTaskArgs a;
        a.add_scalar(reinterpret_cast<uintptr_t>(g)).add_scalar(2);
        return o.submit_next_level(kGateInKernel, a, 0);
      },
      Deadline::after_ms(8000));
  ASSERT_FALSE(s.ok());
  EXPECT_GE(g->started.load(), 1u) << "a kernel ran";
  EXPECT_NE(s.message().find("chip 0 (pid " + std::to_string(pid) + ") task failed"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("TASKRING_RUN_TIMEOUT_MS"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find("killed it"), std::string::npos) << "the watch ended it: " << s.message();
  open_gate(g);  // the abandoned kernel returns
  ChipTensor x = shared_row(*w, 2.0f), y = shared_row(*w, -1.0f);
  s = w->run([&](Orchestrator& o) { return add(o, x, y, 3.0f); }, Deadline::after_ms(20000));
  ASSERT_TRUE(s.ok()) << "the chip serves the next run: " << s.to_string();
  for (uint32_t k = 0; k < kN; ++k) ASSERT_EQ(y.data<float>()[k], 5.0f) << "y[" << k << "]";
  EXPECT_EQ(w->chip_pid(0), pid);
  EXPECT_TRUE(w->close().ok());
}

}  // namespace
}  // namespace taskring::node::testing
