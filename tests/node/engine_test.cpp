// The L3 engine on in-process fake endpoints: dependency inference (RAW,
// WAW, WAR, disjoint slices), group reservation, the SUB pool, poisoning,
// the run fence, cancellation, the heap ring and dead endpoints.
//
// Ordering checks use a witness instead of a sleep: an independent task
// submitted later to the same chip. The scheduler dispatches each chip's
// FIFO in order, so if the dependent task had been (wrongly) ready it would
// have started before the witness.
#include <gtest/gtest.h>

#include "engine_harness.hpp"

namespace taskring::node::testing {
namespace {

using TA = TensorArgType;
constexpr uint64_t kMs = 10000;

Deadline soon() { return Deadline::after_ms(kMs); }

// Producer held on chip 0; consumer (tags `ta`, `tb`) on chip 1, then an
// independent witness on chip 1. Returns whether the consumer had started
// when the witness started.
bool consumer_started_before_witness(TA producer_tag, TA consumer_tag, uint32_t consumer_row) {
  Harness h(2);
  auto run = h.run([&](Orchestrator& o) {
    Args1 a(h.tensor(0), producer_tag, kHold);
    Args1 b(h.tensor(consumer_row), consumer_tag, kRun);
    Args1 w(h.tensor(100), TA::OUTPUT_EXISTING, kRun);
    TASKRING_RETURN_IF_ERROR(o.submit_next_level(0, a.args, 0));
    TASKRING_RETURN_IF_ERROR(o.submit_next_level(0, b.args, 1));
    return o.submit_next_level(0, w.args, 1);
  });
  EXPECT_TRUE(h.chip[0]->wait_started(1, soon()).ok());
  bool witness_first = false;
  Status s = h.chip[1]->wait_started(1, soon());
  EXPECT_TRUE(s.ok()) << s.to_string();
  auto started = h.chip[1]->started();
  // The witness writes row 100: tensor address tells who came first.
  witness_first = started[0].tensors[0].data_addr() == h.tensor(100).data_addr();
  h.chip[0]->finish();
  EXPECT_TRUE(Harness::wait(run).ok());
  EXPECT_EQ(h.chip[1]->started_count(), 2u);
  return !witness_first;
}

TEST(EngineDeps, ReadAfterWriteWaits) {
  EXPECT_FALSE(consumer_started_before_witness(TA::OUTPUT_EXISTING, TA::INPUT, 0));
}
TEST(EngineDeps, WriteAfterWriteWaits) {
  EXPECT_FALSE(consumer_started_before_witness(TA::OUTPUT_EXISTING, TA::OUTPUT_EXISTING, 0));
}
TEST(EngineDeps, WriteAfterReadWaits) {
  EXPECT_FALSE(consumer_started_before_witness(TA::INPUT, TA::INOUT, 2));  // rows 2..5 overlap 0..3
}
TEST(EngineDeps, ReadAfterReadDoesNotWait) { EXPECT_TRUE(consumer_started_before_witness(TA::INPUT, TA::INPUT, 0)); }
TEST(EngineDeps, DisjointRowsOfOneBufferDoNotWait) {
  EXPECT_TRUE(consumer_started_before_witness(TA::OUTPUT_EXISTING, TA::INPUT, 4));  // rows 4..7 vs 0..3
}
TEST(EngineDeps, NoDepIsNotTracked) {
  EXPECT_TRUE(consumer_started_before_witness(TA::OUTPUT_EXISTING, TA::NO_DEP, 0));
}

TEST(EngineGroups, HeadReservesItsChipsButNotOthers) {
  Harness h(3);
  auto run = h.run([&](Orchestrator& o) {
    Args1 hold(h.tensor(0), TA::OUTPUT_EXISTING, kHold);
    TASKRING_RETURN_IF_ERROR(o.submit_next_level(0, hold.args, 0));
    // The group phase comes first in a pass: let the single task take chip 0
    // before the group exists, so the group finds chip 0 busy.
    TASKRING_RETURN_IF_ERROR(h.chip[0]->wait_started(1, soon()));
    Args1 g0(h.tensor(10), TA::OUTPUT_EXISTING, kRun), g1(h.tensor(20), TA::OUTPUT_EXISTING, kRun);
    const ChipTaskArgs* ga[] = {&g0.args, &g1.args};
    const int gc[] = {0, 1};
    TASKRING_RETURN_IF_ERROR(o.submit_next_level_group(0, ga, gc));
    Args1 single(h.tensor(30), TA::OUTPUT_EXISTING, kRun);  // chip 1: reserved by the group
    TASKRING_RETURN_IF_ERROR(o.submit_next_level(0, single.args, 1));
    Args1 other(h.tensor(40), TA::OUTPUT_EXISTING, kRun);  // chip 2: unrelated
    return o.submit_next_level(0, other.args, 2);
  });
  // The blocked group does not block chip 2...
  ASSERT_TRUE(h.chip[2]->wait_finished(1, soon()).ok());
  // ...but holds chip 1 for itself: the single task submitted before chip 2's
  // would have started no later than it.
  EXPECT_EQ(h.chip[1]->started_count(), 0u);
  h.chip[0]->finish();
  ASSERT_TRUE(Harness::wait(run).ok());
  auto s1 = h.chip[1]->started();
  ASSERT_EQ(s1.size(), 2u);
  EXPECT_EQ(s1[0].tensors[0].data_addr(), h.tensor(20).data_addr()) << "the group member runs first on chip 1";
  EXPECT_EQ(run->counts.completed, 4u);
}

// A group that nothing else waits for is woken only by its last member:
// every member counts down one slot, set to the group's size.
TEST(EngineGroups, AGroupNothingWaitsForCountsDownOneSlot) {
  Harness h(3, 0, 10000, /*staged=*/true);
  auto run = h.run([&](Orchestrator& o) {
    Args1 g0(h.tensor(0), TA::OUTPUT_EXISTING, kRun), g1(h.tensor(10), TA::OUTPUT_EXISTING, kRun),
        g2(h.tensor(20), TA::OUTPUT_EXISTING, kRun);
    const ChipTaskArgs* ga[] = {&g1.args, &g0.args, &g2.args};
    const int gc[] = {1, 0, 2};
    return o.submit_next_level_group(0, ga, gc);
  });
  ASSERT_TRUE(Harness::wait(run).ok());
  for (int c = 0; c < 3; ++c) EXPECT_EQ(h.chip[c]->countdowns(), std::vector<int32_t>{1}) << "chip " << c;
  // The fake members ring without counting down: the slot keeps its size.
  EXPECT_EQ(h.countdowns[1].load(), 3u);
}

// A ready single task queued for a member's chip when the group starts
// needs that member's completion at once: no countdown, every member rings.
TEST(EngineGroups, AGroupWithWorkQueuedForItsChipsRingsOnEveryMember) {
  Harness h(3, 0, 10000, /*staged=*/true);
  auto run = h.run([&](Orchestrator& o) {
    Args1 hold(h.tensor(0), TA::OUTPUT_EXISTING, kHold);
    TASKRING_RETURN_IF_ERROR(o.submit_next_level(0, hold.args, 1));
    TASKRING_RETURN_IF_ERROR(h.chip[1]->wait_started(1, soon()));
    Args1 g1(h.tensor(10), TA::OUTPUT_EXISTING, kRun), g2(h.tensor(20), TA::OUTPUT_EXISTING, kRun);
    const ChipTaskArgs* ga[] = {&g1.args, &g2.args};
    const int gc[] = {1, 2};
    TASKRING_RETURN_IF_ERROR(o.submit_next_level_group(0, ga, gc));  // waits for chip 1
    Args1 single(h.tensor(30), TA::OUTPUT_EXISTING, kRun);           // ready; chip 2 is the group's
    return o.submit_next_level(0, single.args, 2);
  });
  h.chip[1]->finish();  // run_orchestration returned: every task is queued
  ASSERT_TRUE(Harness::wait(run).ok());
  // Every chip start is staged (one flush per pass); singles never count down.
  EXPECT_EQ(h.chip[1]->countdowns(), (std::vector<int32_t>{-1, -1}));  // the held single, the member
  EXPECT_EQ(h.chip[2]->countdowns(), (std::vector<int32_t>{-1, -1}));  // the member, the single
  EXPECT_EQ(run->counts.completed, 3u);
}

TEST(GroupCountdown, OnlyTheLastMemberOrAFailedOneRings) {
  std::atomic<uint32_t> slots[2] = {};
  EXPECT_TRUE(finish_rings_parent(slots, -1, true)) << "no slot: every task rings";
  EXPECT_TRUE(finish_rings_parent(nullptr, 0, true)) << "no countdowns: every task rings";
  slots[1].store(3);
  EXPECT_FALSE(finish_rings_parent(slots, 1, true));
  EXPECT_FALSE(finish_rings_parent(slots, 1, true));
  EXPECT_TRUE(finish_rings_parent(slots, 1, true)) << "the third of three";
  slots[1].store(3);
  EXPECT_FALSE(finish_rings_parent(slots, 1, true));
  EXPECT_TRUE(finish_rings_parent(slots, 1, false)) << "a failure rings at once";
  EXPECT_TRUE(finish_rings_parent(slots, 1, true)) << "and the last still rings";
  EXPECT_EQ(slots[0].load(), 0u) << "another slot is untouched";
}

TEST(EngineGroups, MemberFailureGivesOneErrorAndSkipsConsumers) {
  Harness h(2);
  auto run = h.run([&](Orchestrator& o) {
    Args1 g0(h.tensor(0), TA::OUTPUT_EXISTING, kRun), g1(h.tensor(10), TA::OUTPUT_EXISTING, kFail);
    const ChipTaskArgs* ga[] = {&g0.args, &g1.args};
    const int gc[] = {0, 1};
    TASKRING_RETURN_IF_ERROR(o.submit_next_level_group(0, ga, gc));
    Args1 c0(h.tensor(0), TA::INPUT, kRun), c1(h.tensor(10), TA::INPUT, kRun);
    const ChipTaskArgs* ca[] = {&c0.args, &c1.args};
    Status s = o.submit_next_level_group(0, ca, gc);
    return s.code() == StatusCode::kInternal ? Status::Ok() : s;  // fail-fast if the group already failed
  });
  Status s = Harness::wait(run);
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s.to_string();
  EXPECT_NE(s.message().find("injected task failure"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("group of 2"), std::string::npos) << s.message();
  EXPECT_EQ(run->counts.failed, 1u);
  EXPECT_EQ(run->counts.completed, 0u);
  EXPECT_EQ(h.chip[0]->started_count() + h.chip[1]->started_count(), 2u) << "consumer members never start";
}

TEST(EngineSub, PoolServesFifoOnAnyIdleWorker) {
  Harness h(0, 2);
  auto run = h.run([&](Orchestrator& o) {
    for (int i = 0; i < 3; ++i) {
      Args1 a(h.tensor(static_cast<uint32_t>(i) * 10), TA::OUTPUT_EXISTING, kHold);
      TASKRING_RETURN_IF_ERROR(o.submit_sub(0, a.args));
    }
    return Status::Ok();
  });
  ASSERT_TRUE(h.sub[0]->wait_started(1, soon()).ok());
  ASSERT_TRUE(h.sub[1]->wait_started(1, soon()).ok());
  EXPECT_EQ(h.sub[0]->started_count() + h.sub[1]->started_count(), 2u);
  h.sub[1]->finish();
  ASSERT_TRUE(h.sub[1]->wait_started(2, soon()).ok()) << "the third task takes the freed worker";
  h.sub[0]->finish();
  h.sub[1]->finish();
  EXPECT_TRUE(Harness::wait(run).ok());
}

TEST(EngineSub, GroupNeedsDistinctIdleWorkers) {
  Harness h(0, 2);
  auto run = h.run([&](Orchestrator& o) {
    Args1 a(h.tensor(0), TA::OUTPUT_EXISTING, kRun), b(h.tensor(10), TA::OUTPUT_EXISTING, kRun);
    const ChipTaskArgs* ga[] = {&a.args, &b.args};
    return o.submit_sub_group(0, ga);
  });
  EXPECT_TRUE(Harness::wait(run).ok());
  EXPECT_EQ(h.sub[0]->started_count(), 1u);
  EXPECT_EQ(h.sub[1]->started_count(), 1u);
}

TEST(EngineFailure, ProducerFailurePoisonsTransitiveConsumersOnly) {
  Harness h(2, 1);
  auto run = h.run([&](Orchestrator& o) {
    Args1 a(h.tensor(0), TA::OUTPUT_EXISTING, kFail);
    Args1 b(h.tensor(0), TA::INOUT, kRun);             // consumer of a (chip)
    Args1 c(h.tensor(0), TA::INPUT, kRun);             // consumer of b (SUB)
    Args1 d(h.tensor(50), TA::OUTPUT_EXISTING, kRun);  // independent
    TASKRING_RETURN_IF_ERROR(o.submit_next_level(0, a.args, 0));
    // Once a has failed, a submit fails fast instead: also legal, and then
    // nothing later is submitted at all.
    if (!o.submit_next_level(0, b.args, 1).ok()) return Status::Ok();
    if (!o.submit_sub(0, c.args).ok()) return Status::Ok();
    (void)o.submit_next_level(0, d.args, 1);
    return Status::Ok();
  });
  Status s = Harness::wait(run);
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s.to_string();
  EXPECT_EQ(run->counts.failed, 1u);
  EXPECT_EQ(h.sub[0]->started_count(), 0u) << "nothing downstream of the failure runs";
  for (const TaskPayload& p : h.chip[1]->started())
    EXPECT_EQ(p.tensors[0].data_addr(), h.tensor(50).data_addr()) << "only the independent task ran on chip 1";
}

TEST(EngineFailure, FirstErrorWinsAndLaterSubmitsFailFast) {
  Harness h(1);
  Status late;
  auto run = h.run([&](Orchestrator& o) {
    Args1 a(h.tensor(0), TA::OUTPUT_EXISTING, kFail);
    TASKRING_RETURN_IF_ERROR(o.submit_next_level(0, a.args, 0));
    EXPECT_TRUE(h.chip[0]->wait_finished(1, soon()).ok());
    // The failure is applied under the engine lock right after the poll;
    // submit until the fence shows (bounded: one pass of the scheduler).
    Deadline d = soon();
    while (!d.expired()) {
      Args1 b(h.tensor(10), TA::OUTPUT_EXISTING, kRun);
      late = o.submit_next_level(0, b.args, 0);
      if (!late.ok()) break;
    }
    return Status::Ok();
  });
  Status s = Harness::wait(run);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_EQ(late, s) << "a later submit returns the run's first error";
}

TEST(EngineFailure, OrchestrationErrorCancelsUnstartedWorkAndEngineStaysUsable) {
  Harness h(2);
  auto run = h.run([&](Orchestrator& o) {
    Args1 a(h.tensor(0), TA::OUTPUT_EXISTING, kHold);
    TASKRING_RETURN_IF_ERROR(o.submit_next_level(0, a.args, 0));
    TASKRING_RETURN_IF_ERROR(h.chip[0]->wait_started(1, soon()));  // started work is not cancelled
    for (uint32_t i = 0; i < 5; ++i) {
      Args1 b(h.tensor(0), TA::INPUT, kRun);
      TASKRING_RETURN_IF_ERROR(o.submit_next_level(0, b.args, 1));
    }
    return invalid_argument("user orchestration gave up");
  });
  h.chip[0]->finish();
  Status s = Harness::wait(run);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("user orchestration gave up"), std::string::npos);
  EXPECT_EQ(h.chip[1]->started_count(), 0u);
  EXPECT_EQ(run->counts.skipped, 5u);
  auto next = h.run([&](Orchestrator& o) {
    Args1 b(h.tensor(0), TA::INPUT, kRun);
    return o.submit_next_level(0, b.args, 1);
  });
  EXPECT_TRUE(Harness::wait(next).ok());
  EXPECT_EQ(h.chip[1]->started_count(), 1u);
}

TEST(EngineFailure, DeadEndpointFailsItsTaskAndLaterDispatchesFast) {
  Harness h(1);
  auto run = h.run([&](Orchestrator& o) {
    Args1 a(h.tensor(0), TA::OUTPUT_EXISTING, kHold);
    return o.submit_next_level(0, a.args, 0);
  });
  ASSERT_TRUE(h.chip[0]->wait_started(1, soon()).ok());
  h.chip[0]->kill(unavailable("chip 0 (pid 42) killed by signal 9 (SIGKILL)"));
  Status s = Harness::wait(run);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("pid 42"), std::string::npos);
  auto next = h.run([&](Orchestrator& o) {
    Args1 a(h.tensor(0), TA::OUTPUT_EXISTING, kRun);
    return o.submit_next_level(0, a.args, 0);
  });
  Status n = Harness::wait(next);
  EXPECT_EQ(n.code(), StatusCode::kUnavailable) << n.to_string();
  EXPECT_EQ(h.chip[0]->started_count(), 1u);
}

TEST(EngineHeap, FullRingTimesOutNamingTheKnob) {
  Harness h(1, 0, /*heap_wait_ms=*/50);
  auto run = h.run([&](Orchestrator& o) -> Status {
    TASKRING_ASSIGN_OR_RETURN(ChipTensor big, o.alloc({Harness::kRing / 4}, DataType::FLOAT32));
    (void)big;
    auto more = o.alloc({256}, DataType::FLOAT32);
    return more.status();
  });
  Status s = Harness::wait(run);
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.to_string();
  EXPECT_NE(s.message().find("heap_ring_bytes"), std::string::npos) << s.message();
}

TEST(EngineHeap, EndedScopeRetiresOnceItsTasksFinish) {
  Harness h(1, 0, /*heap_wait_ms=*/10000);
  auto run = h.run([&](Orchestrator& o) -> Status {
    for (int round = 0; round < 4; ++round) {  // each round takes 3/4 of the ring
      TASKRING_RETURN_IF_ERROR(o.scope_begin());
      TASKRING_ASSIGN_OR_RETURN(ChipTensor t, o.alloc({3 * Harness::kRing / 16}, DataType::FLOAT32));
      ChipTensor v = t;
      ChipTaskArgs a;
      a.add_output(v).add_scalar(uint64_t{kRun});
      TASKRING_RETURN_IF_ERROR(o.submit_next_level(0, a, 0));
      TASKRING_RETURN_IF_ERROR(o.scope_end());
    }
    return Status::Ok();
  });
  Status s = Harness::wait(run);
  EXPECT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(run->counts.completed, 4u);
}

TEST(EngineValidation, BadSubmitsNameTheProblem) {
  Harness h(2, 1);
  auto expect_error = [&](const std::function<Status(Orchestrator&)>& fn, StatusCode code, const char* text) {
    auto run = h.run(fn);
    Status s = Harness::wait(run);
    EXPECT_EQ(s.code(), code) << s.to_string();
    EXPECT_NE(s.message().find(text), std::string::npos) << s.message();
  };
  expect_error(
      [&](Orchestrator& o) {
        Args1 a(h.tensor(0), TA::INPUT, kRun);
        return o.submit_next_level(7, a.args, 0);
      },
      StatusCode::kNotFound, "callable id 7");
  expect_error(
      [&](Orchestrator& o) {
        Args1 a(h.tensor(0), TA::INPUT, kRun);
        return o.submit_next_level(0, a.args, 5);
      },
      StatusCode::kOutOfRange, "chip 5 is not in [0, 2)");
  expect_error(
      [&](Orchestrator& o) {
        Args1 a(h.tensor(0), TA::INPUT, kRun), b(h.tensor(9), TA::INPUT, kRun);
        const ChipTaskArgs* ga[] = {&a.args, &b.args};
        const int gc[] = {1, 1};
        return o.submit_next_level_group(0, ga, gc);
      },
      StatusCode::kInvalidArgument, "appears twice");
  expect_error(
      [&](Orchestrator& o) {
        static float outside[64];
        ChipTensor t = make_tensor_external(outside, {64});
        Args1 a(t, TA::INPUT, kRun);
        return o.submit_sub(0, a.args);
      },
      StatusCode::kInvalidArgument, "not in the node's shared heap");
  expect_error(
      [&](Orchestrator& o) {
        ChipTensor t = h.tensor(0, 8).slice(1, 0, 32);  // half of every row
        Args1 a(t, TA::OUTPUT_EXISTING, kRun);
        return o.submit_next_level(0, a.args, 0);
      },
      StatusCode::kInvalidArgument, "non-contiguous");
  expect_error(
      [&](Orchestrator& o) {
        TensorCreateInfo ci({4, 4}, DataType::FLOAT32);
        ChipTaskArgs a;
        a.add_output(ci);
        return o.submit_next_level(0, a, 0);
      },
      StatusCode::kInvalidArgument, "OUTPUT (TensorCreateInfo)");
  expect_error([&](Orchestrator& o) { return o.scope_end(); }, StatusCode::kFailedPrecondition, "scope_end");
}

// The domain cache's reuse involves no member: the second allocation of
// the same chips and size sends no control request, hints exactly its
// members to stay awake and wakes them with one ring of the group bell,
// and hands out the members' mappings of the first.
TEST(EngineDomainCache, AReuseSendsNoRequestAndHintsOnlyItsMembersWithOneRing) {
  auto exchange = make_memfd_window_exchange();
  Harness h(3, 0, 10000, /*staged=*/true, exchange.get());
  const int members[] = {2, 0};
  std::vector<uint64_t> bases;
  auto allocate = [&] {
    return Harness::wait(h.run([&](Orchestrator& o) -> Status {
      TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_domain("kept", members, 4096));
      for (int c : members) {
        TASKRING_ASSIGN_OR_RETURN(const DomainMember m, d->member(c));
        bases.push_back(m.window_base);
      }
      return Status::Ok();
    }));
  };
  ASSERT_TRUE(allocate().ok());
  ASSERT_EQ(h.domains->cached(), 1);
  const int requests[] = {h.chip[0]->control_requests(), h.chip[1]->control_requests(), h.chip[2]->control_requests()};
  EXPECT_EQ(requests[0], 1);  // the attach
  EXPECT_EQ(requests[1], 0);
  for (FakeEndpoint* c : h.chip) EXPECT_EQ(c->work_hints(), 0);
  const uint32_t rings = h.group_bell.epoch.load();

  ASSERT_TRUE(allocate().ok());
  for (int c = 0; c < 3; ++c) EXPECT_EQ(h.chip[c]->control_requests(), requests[c]) << "chip " << c;
  EXPECT_EQ(h.chip[0]->work_hints(), 1);
  EXPECT_EQ(h.chip[1]->work_hints(), 0);
  EXPECT_EQ(h.chip[2]->work_hints(), 1);
  EXPECT_EQ(h.group_bell.epoch.load(), rings + 1);
  ASSERT_EQ(bases.size(), 4u);
  EXPECT_EQ(bases[2], bases[0]);
  EXPECT_EQ(bases[3], bases[1]);
  EXPECT_EQ(h.domains->cached(), 1);
}

// What a run borrows hooks into it (Engine::add_run_hooks): a passed run
// runs each fence hook once, the last added first, then at_every_fence,
// all before the run is done, and never the abort hooks.
TEST(EngineRunHooks, APassedRunFencesLastAddedFirstAndNeverAborts) {
  Harness h(1);
  std::vector<std::string> log;  // the scheduler thread appends; read after the run
  bool done_at_fence = true;
  h.every_fence = [&](const RunFence& f) {
    log.push_back(std::string("every") + (f.failed ? " failed" : "") + (f.closing ? " closing" : ""));
    return Status::Ok();
  };
  auto run = h.run([&](Orchestrator& o) {
    Args1 a(h.tensor(0), TA::OUTPUT_EXISTING, kHold);
    return o.submit_next_level(0, a.args, 0);
  });
  ASSERT_TRUE(h.chip[0]->wait_started(1, soon()).ok());
  for (const char* name : {"a", "b"})
    h.engine->add_run_hooks(
        run.get(), [&log, name] { log.push_back(std::string("abort ") + name); },
        [&, name, r = run.get()](const RunFence& f) {
          done_at_fence = done_at_fence && !r->done.load(std::memory_order_acquire);
          log.push_back(std::string("fence ") + name + (f.failed ? " failed" : ""));
          return Status::Ok();
        });
  h.chip[0]->finish();
  ASSERT_TRUE(Harness::wait(run).ok());
  EXPECT_EQ(log, (std::vector<std::string>{"fence b", "fence a", "every"}));
  EXPECT_TRUE(done_at_fence) << "a fence hook ran after the run was published done";
}

// A failed run: every abort hook runs once at its first error, a hook added
// after that aborts at once, the fence says `failed`, and a fence hook's
// own error does not replace the first error.
TEST(EngineRunHooks, AFailedRunAbortsEveryHookOnceAndFencesAsFailed) {
  Harness h(1);
  int aborts_a = 0, aborts_late = 0;
  std::vector<std::string> fences;
  h.every_fence = [&](const RunFence& f) {
    fences.push_back(f.failed ? "every failed" : "every");
    return Status::Ok();
  };
  auto run = h.run([&](Orchestrator& o) {
    Args1 a(h.tensor(0), TA::OUTPUT_EXISTING, kHold);
    return o.submit_next_level(0, a.args, 0);
  });
  ASSERT_TRUE(h.chip[0]->wait_started(1, soon()).ok());
  h.engine->add_run_hooks(
      run.get(), [&] { ++aborts_a; },
      [&](const RunFence& f) {
        fences.push_back(f.failed ? "a failed" : "a");
        return internal_error("releasing a failed");
      });
  EXPECT_TRUE(h.engine->run_open(run.get()).ok());
  h.chip[0]->finish(Outcome{OutcomeKind::kTaskFailure, internal_error("injected")});
  Status s = Harness::wait(run);
  EXPECT_NE(s.message().find("injected"), std::string::npos) << s.to_string();
  EXPECT_EQ(aborts_a, 1);
  EXPECT_EQ(fences, (std::vector<std::string>{"a failed", "every failed"}));
  EXPECT_NE(h.engine->run_open(run.get()).message().find("injected"), std::string::npos);
  // Too late for the fence, but a hook added to a failed run aborts at once.
  h.engine->add_run_hooks(
      run.get(), [&] { ++aborts_late; }, [](const RunFence&) { return Status::Ok(); });
  EXPECT_EQ(aborts_late, 1);
}

// The engine names no caller of its own: its messages use EngineConfig::api.
TEST(EngineApiNames, MessagesNameTheCallersApi) {
  Harness h(1, 0, 10000, false, nullptr, EngineApi{"NetWorker", "", ""});
  auto run = h.engine->run_orchestration(nullptr);
  Status s = Harness::wait(run);
  EXPECT_NE(s.message().find("NetWorker::submit: empty orchestration function"), std::string::npos) << s.to_string();
  auto sub = h.run([&](Orchestrator& o) {
    Args1 a(h.tensor(0), TA::INPUT, kRun);
    return o.submit_sub(0, a.args);
  });
  s = Harness::wait(sub);
  EXPECT_NE(s.message().find("NetWorker runs no SUB workers"), std::string::npos) << s.to_string();
  EXPECT_EQ(s.message().find("NodeConfig"), std::string::npos) << s.to_string();
  auto big = h.run([&](Orchestrator& o) {
    const uint32_t shape[] = {1u << 20};
    return o.alloc(shape, DataType::FLOAT32).status();
  });
  s = Harness::wait(big);
  EXPECT_NE(s.message().find("NetWorker has no heap ring"), std::string::npos) << s.to_string();
}

}  // namespace
}  // namespace taskring::node::testing
