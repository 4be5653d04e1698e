// RunGate (l2/run_gate.hpp): quiesce() returns only once every executor
// and every admitted non-executor thread (tmr's orchestrator) has left the
// run, so a runtime may reset its run state without a thread of the previous
// run still reading it.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "l2/run_gate.hpp"

namespace taskring::l2 {
namespace {

TEST(RunGate, EnterFailsOnceClosedAndQuiesceSeesEveryLeave) {
  RunGate gate;
  EXPECT_FALSE(gate.enter()) << "a gate never opened admits nobody";
  EXPECT_TRUE(gate.quiesce(Deadline::after_ms(1000)).ok());
  gate.open();
  ASSERT_TRUE(gate.enter());
  EXPECT_TRUE(gate.close());
  EXPECT_FALSE(gate.close()) << "only the first close() ends the run";
  EXPECT_FALSE(gate.enter());
  Status busy = gate.quiesce(Deadline::after_ms(20));
  EXPECT_EQ(busy.code(), StatusCode::kDeadlineExceeded) << busy.to_string();
  gate.leave();
  EXPECT_TRUE(gate.quiesce(Deadline::after_ms(1000)).ok());
}

TEST(RunGate, QuiesceWaitsForAnAdmittedThreadAfterTheRunClosed) {
  RunGate gate;
  gate.admit();  // as tmr's start_run does for its orchestrator
  gate.open();
  EXPECT_TRUE(gate.close());
  Status busy = gate.quiesce(Deadline::after_ms(20));
  EXPECT_EQ(busy.code(), StatusCode::kDeadlineExceeded)
      << "quiesce() returned while the admitted thread was still in the run";
  std::atomic<bool> left{false};
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    left.store(true);
    gate.leave();
  });
  Status s = gate.quiesce(Deadline::after_ms(5000));
  EXPECT_TRUE(s.ok()) << s.to_string();
  EXPECT_TRUE(left.load());
  t.join();
}

}  // namespace
}  // namespace taskring::l2
