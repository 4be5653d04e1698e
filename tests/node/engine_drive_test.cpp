// Waiters that drive their runs (EngineConfig::waiters_drive, see DriveGate
// in engine.hpp): a run whose caller waits costs the scheduler thread no
// pass, a run nobody waits for still finishes, a shutdown ends a driving
// wait, and an engine whose waiters do not drive (L4) still finishes runs.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "engine_harness.hpp"

namespace taskring::node::testing {
namespace {

using TA = TensorArgType;

// Three SUB tasks in a chain on rows [0, 4) of the host buffer.
Status chain_of_three(Harness& h, Orchestrator& o) {
  for (int i = 0; i < 3; ++i) {
    Args1 a(h.tensor(0), TA::INOUT, kRun);
    TASKRING_RETURN_IF_ERROR(o.submit_sub(0, a.args));
  }
  return Status::Ok();
}

TEST(EngineDrive, RunsWhoseCallerWaitsCostTheSchedulerThreadNoPass) {
  Harness h(0, 1);
  constexpr int kRuns = 200;
  // The first run puts the scheduler thread aside; count from there.
  ASSERT_TRUE(Engine::wait_run(
                  *h.engine->run_orchestration([&](Orchestrator& o) { return chain_of_three(h, o); }, nullptr, true),
                  Deadline::after_ms(10000))
                  .ok());
  const uint64_t before = h.engine->scheduler_passes();
  for (int r = 0; r < kRuns; ++r) {
    auto run = h.engine->run_orchestration([&](Orchestrator& o) { return chain_of_three(h, o); }, nullptr, true);
    Status s = Engine::wait_run(*run, Deadline::after_ms(10000));
    ASSERT_TRUE(s.ok()) << "run " << r << ": " << s.to_string();
    ASSERT_EQ(run->counts.completed, 3u);
  }
  // Each run had three completions and three dispatches; a scheduler thread
  // carrying them makes at least one pass per run. Aside, it only wakes
  // once per idle slice (50 ms) to re-check.
  const uint64_t passes = h.engine->scheduler_passes() - before;
  EXPECT_LT(passes, static_cast<uint64_t>(kRuns / 4)) << "the scheduler thread carried driven runs";
  EXPECT_EQ(h.sub[0]->started_count(), static_cast<size_t>(3 * (kRuns + 1)));
}

TEST(EngineDrive, ARunNobodyWaitsForFinishesOnTheSchedulerThread) {
  Harness h(0, 1);
  // A driven run first, so the scheduler thread is aside when the next run
  // is submitted without a waiter.
  ASSERT_TRUE(
      Harness::wait(h.engine->run_orchestration([&](Orchestrator& o) { return chain_of_three(h, o); }, nullptr, true))
          .ok());
  auto run = h.engine->run_orchestration([&](Orchestrator& o) {
    Args1 a(h.tensor(0), TA::INOUT, kHold);
    TASKRING_RETURN_IF_ERROR(o.submit_sub(0, a.args));
    return chain_of_three(h, o);
  });
  ASSERT_TRUE(h.sub[0]->wait_started(4, Deadline::after_ms(10000)).ok());
  h.sub[0]->finish();
  // Wait without driving: only the scheduler thread can finish the chain.
  Status w =
      run->waiter.wait([&] { return run->done.load(std::memory_order_acquire); }, Deadline::after_ms(10000), "the run");
  ASSERT_TRUE(w.ok()) << w.to_string();
  EXPECT_TRUE(run->status.ok()) << run->status.to_string();
  EXPECT_EQ(run->counts.completed, 4u);
}

// SubmitOptions::caller_waits promised a waiter that never came: the
// scheduler thread, parked aside, still finishes the run at its next look.
TEST(EngineDrive, ARunWhoseCallerSaidItWaitsButDoesNotStillFinishes) {
  Harness h(0, 1);
  ASSERT_TRUE(
      Harness::wait(h.engine->run_orchestration([&](Orchestrator& o) { return chain_of_three(h, o); }, nullptr, true))
          .ok());
  auto run = h.engine->run_orchestration(
      [&](Orchestrator& o) {
        Args1 a(h.tensor(0), TA::INOUT, kHold);
        TASKRING_RETURN_IF_ERROR(o.submit_sub(0, a.args));
        return chain_of_three(h, o);
      },
      nullptr, true);
  ASSERT_TRUE(h.sub[0]->wait_started(4, Deadline::after_ms(10000)).ok());  // 3 of the first run + the held one
  h.sub[0]->finish();
  Status w =
      run->waiter.wait([&] { return run->done.load(std::memory_order_acquire); }, Deadline::after_ms(10000), "the run");
  ASSERT_TRUE(w.ok()) << w.to_string();
  EXPECT_EQ(run->counts.completed, 4u);
}

TEST(EngineDrive, ShutdownEndsAWaitThatDrives) {
  Harness h(1);
  auto run = h.engine->run_orchestration(
      [&](Orchestrator& o) {
        Args1 a(h.tensor(0), TA::INOUT, kHold);  // never finishes
        return o.submit_next_level(0, a.args, 0);
      },
      nullptr, true);
  Status waited;
  std::thread waiter([&] { waited = Engine::wait_run(*run, Deadline::after_ms(30000)); });
  ASSERT_TRUE(h.chip[0]->wait_started(1, Deadline::after_ms(10000)).ok());
  h.engine->shutdown(aborted("test shutdown"), Deadline::after_ms(0));
  waiter.join();
  EXPECT_EQ(waited.code(), StatusCode::kAborted) << waited.to_string();
  EXPECT_NE(waited.message().find("test shutdown"), std::string::npos) << waited.message();
  EXPECT_TRUE(run->done.load());
  h.engine.reset();  // the gate is closed: no driver touches the engine now
  EXPECT_EQ(Engine::wait_run(*run, Deadline::after_ms(0)).code(), StatusCode::kAborted);
}

TEST(EngineDrive, ADeadlineEndsADrivingWaitAndTheRunGoesOn) {
  Harness h(1);
  auto run = h.engine->run_orchestration(
      [&](Orchestrator& o) {
        Args1 a(h.tensor(0), TA::INOUT, kHold);
        return o.submit_next_level(0, a.args, 0);
      },
      nullptr, true);
  Status first = Engine::wait_run(*run, Deadline::after_ms(20));
  EXPECT_EQ(first.code(), StatusCode::kDeadlineExceeded) << first.to_string();
  EXPECT_NE(first.message().find("the node run to finish"), std::string::npos) << first.message();
  h.chip[0]->finish();
  EXPECT_TRUE(Engine::wait_run(*run, Deadline::after_ms(10000)).ok());
}

// Processes that outnumber the CPUs (ShmBell::spin 0): the driver yields
// its CPU for EngineConfig::driver_yield_ns before it parks, so a completion
// in that window costs it no park and no wake. The window is a minute here,
// so that "no park" holds however slowly this host runs the test.
Harness oversubscribed(uint64_t yield_ns) {
  return Harness(1, 0, 10000, false, nullptr,
                 EngineApi{"NodeWorker", "NodeConfig::sub_workers", "NodeConfig::heap_ring_bytes"}, true, 1, yield_ns);
}

std::shared_ptr<RunState> one_held_chip_task(Harness& h) {
  return h.engine->run_orchestration(
      [&](Orchestrator& o) {
        Args1 a(h.tensor(0), TA::INOUT, kHold);
        return o.submit_next_level(0, a.args, 0);
      },
      nullptr, true);
}

TEST(EngineDrive, OversubscribedADriverYieldsInsteadOfParkingUntilTheRunEnds) {
  Harness h = oversubscribed(60'000'000'000);
  h.bell.spin = 0;
  auto run = one_held_chip_task(h);
  const uint64_t polled = h.chip[0]->poll_count();
  Status waited;
  std::thread waiter([&] { waited = Engine::wait_run(*run, Deadline::after_ms(60000)); });
  // The driver is in its loop once it polled; give it time to park, were
  // it to park, before the task ends.
  ASSERT_TRUE(h.chip[0]->wait_polls(polled + 1, Deadline::after_ms(10000)).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  h.chip[0]->finish();
  waiter.join();
  EXPECT_TRUE(waited.ok()) << waited.to_string();
  EXPECT_EQ(run->counts.completed, 1u);
  EXPECT_EQ(h.engine->driver_parks(), 0u) << "the driver parked inside its yield window";
}

TEST(EngineDrive, OversubscribedADriverStillParksAfterItsYieldWindowAndKeepsItsDeadline) {
  {
    Harness h = oversubscribed(1'000'000);  // 1 ms, then park
    h.bell.spin = 0;
    auto run = one_held_chip_task(h);
    Status first = Engine::wait_run(*run, Deadline::after_ms(300));
    EXPECT_EQ(first.code(), StatusCode::kDeadlineExceeded) << first.to_string();
    EXPECT_GE(h.engine->driver_parks(), 1u) << "a stalled task kept the driver yielding past its window";
    h.chip[0]->finish();
    EXPECT_TRUE(Engine::wait_run(*run, Deadline::after_ms(10000)).ok());
  }
  // A deadline inside the yield window ends the wait, naming what it waited
  // for; the run goes on. (The bound below catches a loop that ignores the
  // deadline, which would yield for the whole minute.)
  Harness h = oversubscribed(60'000'000'000);
  h.bell.spin = 0;
  auto run = one_held_chip_task(h);
  const uint64_t t0 = mono_ns();
  Status first = Engine::wait_run(*run, Deadline::after_ms(50));
  EXPECT_LT(mono_ns() - t0, 30'000'000'000u) << "the yield loop ignored the wait's deadline";
  EXPECT_EQ(first.code(), StatusCode::kDeadlineExceeded) << first.to_string();
  EXPECT_NE(first.message().find("the node run to finish"), std::string::npos) << first.message();
  h.chip[0]->finish();
  EXPECT_TRUE(Engine::wait_run(*run, Deadline::after_ms(10000)).ok());
}

TEST(EngineDrive, AnEngineWhoseWaitersDoNotDriveFinishesRuns) {
  Harness h(0, 1, 10000, false, nullptr,
            EngineApi{"NodeWorker", "NodeConfig::sub_workers", "NodeConfig::heap_ring_bytes"},
            /*waiters_drive=*/false);
  for (int r = 0; r < 20; ++r) {
    auto run = h.engine->run_orchestration([&](Orchestrator& o) { return chain_of_three(h, o); }, nullptr, true);
    EXPECT_EQ(run->gate, nullptr);
    ASSERT_TRUE(Harness::wait(run).ok()) << "run " << r;
  }
  EXPECT_GE(h.engine->scheduler_passes(), 20u) << "without drivers the scheduler thread carries every run";
}

}  // namespace
}  // namespace taskring::node::testing
