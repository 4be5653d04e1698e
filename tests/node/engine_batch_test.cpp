// Batched dispatch (engine_chain.cpp) on fake chips that queue tasks like a
// forked chip child: what one pass makes ready goes out as one batch, a
// chain is queued behind its running head, a failure inside a batch runs
// nothing that follows it there, and a member never overtakes another
// chip's output.
#include <gtest/gtest.h>

#include "engine_harness.hpp"

namespace taskring::node::testing {
namespace {

using TA = TensorArgType;
constexpr int kDepth = 16;

// `gated`: with a group bell and GroupGates, as on a NodeWorker.
std::unique_ptr<Harness> queued(int chips, bool gated = false) {
  return std::make_unique<Harness>(chips, 0, 10000, gated, nullptr,
                                   EngineApi{"NodeWorker", "NodeConfig::sub_workers", "NodeConfig::heap_ring_bytes"},
                                   true, kDepth);
}

// Reads `in`, writes `out`; the fake's mode in scalar 0.
struct ReadsWrites {
  ReadsWrites(const ChipTensor& in, const ChipTensor& out, Mode mode) : in(in), out(out) {
    args.add_input(this->in).add_output(this->out).add_scalar(static_cast<uint64_t>(mode));
  }
  ChipTensor in, out;
  ChipTaskArgs args;
};

TEST(EngineBatch, ReadyTasksForOneChipGoOutInOneBatch) {
  auto h = queued(2);
  constexpr int kN = 6;
  auto run = h->run([&](Orchestrator& o) -> Status {
    Args1 producer(h->tensor(0), TA::OUTPUT_EXISTING, kHold);
    TASKRING_RETURN_IF_ERROR(o.submit_next_level(0, producer.args, 1));
    for (int i = 0; i < kN; ++i) {
      ReadsWrites a(h->tensor(0), h->tensor(10 + 4 * static_cast<uint32_t>(i)), kRun);
      TASKRING_RETURN_IF_ERROR(o.submit_next_level(0, a.args, 0));
    }
    return Status::Ok();
  });
  // They read what chip 1's task writes: nothing is queued on chip 0 yet.
  EXPECT_EQ(h->chip[0]->started_count(), 0u);
  h->chip[1]->finish();
  ASSERT_TRUE(Harness::wait(run).ok());
  EXPECT_EQ(h->chip[0]->batch_sizes(), std::vector<int>{kN}) << "one pass made them ready: one batch";
  EXPECT_EQ(run->counts.completed, kN + 1u);
}

TEST(EngineBatch, AChainOnOneChipIsQueuedBehindItsRunningHead) {
  auto h = queued(1);
  auto run = h->run([&](Orchestrator& o) -> Status {
    Args1 head(h->tensor(0), TA::INOUT, kHold);
    TASKRING_RETURN_IF_ERROR(o.submit_next_level(0, head.args, 0));
    for (int i = 0; i < 4; ++i) {
      Args1 next(h->tensor(0), TA::INOUT, kRun);
      TASKRING_RETURN_IF_ERROR(o.submit_next_level(0, next.args, 0));
    }
    return Status::Ok();
  });
  ASSERT_EQ(h->chip[0]->started_count(), 5u) << "all queued while the head still runs";
  const auto s = h->chip[0]->started();
  EXPECT_EQ(s[0].after, 0u);
  for (size_t i = 1; i < s.size(); ++i) EXPECT_NE(s[i].after & 1u, 0u) << "task " << i << " follows the one before";
  h->chip[0]->finish();
  ASSERT_TRUE(Harness::wait(run).ok());
  EXPECT_EQ(run->counts.completed, 5u);
}

TEST(EngineBatch, AFailureInsideABatchNamesTheTaskAndSkipsOnlyWhatNeedsIt) {
  auto h = queued(1);
  auto run = h->run([&](Orchestrator& o) -> Status {
    Args1 first(h->tensor(0), TA::OUTPUT_EXISTING, kHold);  // task 0: independent, held
    TASKRING_RETURN_IF_ERROR(o.submit_next_level(0, first.args, 0));
    Args1 bad(h->tensor(10), TA::OUTPUT_EXISTING, kFail);  // task 1: fails
    TASKRING_RETURN_IF_ERROR(o.submit_next_level(0, bad.args, 0));
    Args1 needs(h->tensor(10), TA::INOUT, kRun);  // task 2: needs task 1, queued behind it
    TASKRING_RETURN_IF_ERROR(o.submit_next_level(0, needs.args, 0));
    Args1 other(h->tensor(20), TA::OUTPUT_EXISTING, kRun);  // task 3: independent
    return o.submit_next_level(0, other.args, 0);
  });
  ASSERT_EQ(h->chip[0]->started_count(), 4u) << "all queued while task 0 runs";
  h->chip[0]->finish();
  Status s = Harness::wait(run);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("task 1 (chip 0"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("injected task failure"), std::string::npos) << s.message();
  EXPECT_EQ(run->counts.completed, 2u);  // tasks 0 and 3
  EXPECT_EQ(run->counts.failed, 1u);
  EXPECT_EQ(run->counts.skipped, 1u);  // task 2, never run
}

// Groups on the same chips are queued one behind the other, each member
// waiting on the gate of the group before (the fake chips do not wait;
// the payloads show what a child would), whether it needs that group's
// output on its own chip, on another chip, or nothing; a single task queued
// after a group ends the chain.
TEST(EngineBatch, AGroupIsQueuedBehindTheGroupBeforeItOnTheSameChipsThroughItsGate) {
  auto h = queued(2, /*gated=*/true);
  const int chips[] = {0, 1}, reversed[] = {1, 0};
  auto run = h->run([&](Orchestrator& o) -> Status {
    Args1 a0(h->tensor(0), TA::OUTPUT_EXISTING, kHold), a1(h->tensor(10), TA::OUTPUT_EXISTING, kRun);
    const ChipTaskArgs* ga[] = {&a0.args, &a1.args};
    TASKRING_RETURN_IF_ERROR(o.submit_next_level_group(0, ga, chips));
    // Each member reads what the first group's member on its own chip wrote.
    ReadsWrites b0(h->tensor(0), h->tensor(20), kRun), b1(h->tensor(10), h->tensor(30), kRun);
    const ChipTaskArgs* gb[] = {&b0.args, &b1.args};
    TASKRING_RETURN_IF_ERROR(o.submit_next_level_group(0, gb, chips));
    // Member 0 reads what the second group's member 1 (chip 1) writes.
    ReadsWrites c0(h->tensor(30), h->tensor(40), kRun), c1(h->tensor(20), h->tensor(50), kRun);
    const ChipTaskArgs* gc[] = {&c0.args, &c1.args};
    TASKRING_RETURN_IF_ERROR(o.submit_next_level_group(0, gc, chips));
    // Independent, the same chips in another order.
    Args1 d0(h->tensor(60), TA::OUTPUT_EXISTING, kRun), d1(h->tensor(70), TA::OUTPUT_EXISTING, kRun);
    const ChipTaskArgs* gd[] = {&d0.args, &d1.args};
    TASKRING_RETURN_IF_ERROR(o.submit_next_level_group(0, gd, reversed));
    Args1 single(h->tensor(80), TA::OUTPUT_EXISTING, kRun);
    TASKRING_RETURN_IF_ERROR(o.submit_next_level(0, single.args, 0));
    Args1 e0(h->tensor(90), TA::OUTPUT_EXISTING, kRun), e1(h->tensor(100), TA::OUTPUT_EXISTING, kRun);
    const ChipTaskArgs* ge[] = {&e0.args, &e1.args};
    return o.submit_next_level_group(0, ge, chips);
  });
  const auto s0 = h->chip[0]->started(), s1 = h->chip[1]->started();
  ASSERT_EQ(s0.size(), 5u) << "four groups and the single; the last group waits";
  ASSERT_EQ(s1.size(), 4u);
  EXPECT_EQ(s0[0].wait_gate, -1);
  EXPECT_GE(s0[0].done_gate, 0);
  for (size_t g = 1; g < 4; ++g) {
    EXPECT_EQ(s0[g].wait_gate, s0[g - 1].done_gate) << "group " << g;
    EXPECT_EQ(s1[g].wait_gate, s1[g - 1].done_gate) << "group " << g;
    EXPECT_EQ(s0[g].done_gate, s1[g].done_gate) << "group " << g;
    EXPECT_NE(s0[g].done_gate, s0[g - 1].done_gate) << "group " << g;
    EXPECT_EQ(h->gates[s0[g].done_gate].remaining.load(), 2u) << "group " << g;
  }
  EXPECT_EQ(s0[4].wait_gate, -1) << "the single is ready: only its chip's order";
  h->chip[0]->finish();
  ASSERT_TRUE(Harness::wait(run).ok());
  EXPECT_EQ(h->chip[0]->started_count(), 6u);
  EXPECT_EQ(run->counts.completed, 6u);
}

}  // namespace
}  // namespace taskring::node::testing
