// Mailbox: a Status across the process boundary (code + bounded message),
// the group countdown's ring rule, and the task frame's handoff between a
// parent and a child thread through the release/acquire state word.
#include "mailbox.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

namespace taskring::node {
namespace {

TEST(MailboxStatus, RoundTripsCodeAndMessage) {
  WireResult w;
  w.store(not_found("callable 3 is not registered"));
  EXPECT_EQ(w.load(), not_found("callable 3 is not registered"));
}

TEST(MailboxStatus, OkLeavesTheMessageUntouched) {
  WireResult w;
  w.store(internal_error("old"));
  w.store(Status::Ok());
  EXPECT_TRUE(w.load().ok());
  EXPECT_EQ(w.length, 0u);
  EXPECT_EQ(std::string(w.message, 3), "old");  // not cleared: an OK round trip writes one word
}

TEST(MailboxStatus, ALongMessageIsCutAndMarked) {
  WireResult w;
  w.store(internal_error(std::string(kMessageBytes + 100, 'm')));
  const Status s = w.load();
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_EQ(s.message(), std::string(kMessageBytes, 'm') + "...");
}

TEST(MailboxStatus, AnUnknownCodeBecomesInternal) {
  const char text[] = "bad";
  EXPECT_EQ(load_status(9999, 3, text).code(), StatusCode::kInternal);
  EXPECT_EQ(load_status(-4, 3, text).code(), StatusCode::kInternal);
  EXPECT_EQ(load_status(-4, 3, text).message(), "bad");
  // A length over the buffer reads no further than the buffer.
  char full[kMessageBytes];
  std::fill(full, full + kMessageBytes, 'x');
  EXPECT_EQ(load_status(static_cast<int32_t>(StatusCode::kAborted), 1u << 30, full).message().size(), kMessageBytes);
}

TEST(MailboxCountdown, OnlyTheLastSuccessfulMemberOrAFailureRings) {
  std::atomic<uint32_t> slots[2] = {};
  slots[1].store(3);
  EXPECT_TRUE(finish_rings_parent(nullptr, 1, true));  // no countdowns: always
  EXPECT_TRUE(finish_rings_parent(slots, -1, true));   // no slot: always
  EXPECT_FALSE(finish_rings_parent(slots, 1, true));
  EXPECT_TRUE(finish_rings_parent(slots, 1, false));  // a failure rings at once
  EXPECT_TRUE(finish_rings_parent(slots, 1, true));   // the last one
  EXPECT_EQ(slots[1].load(), 0u);
}

// The parent writes a task slot, then TASK_READY; the child sees the slot
// whole, writes its result, then TASK_DONE; the parent sees the result.
// Rounds go round the queue's slots in order, as LocalEndpoint fills them.
// Bounded: each side gives up after a deadline.
TEST(MailboxFrame, ATaskAndItsResultCrossTheStateWord) {
  auto box = std::make_unique<Mailbox>();
  constexpr int kRounds = 200;
  std::atomic<bool> child_ok{true};
  std::thread child([&] {
    for (int i = 1; i <= kRounds; ++i) {
      TaskSlot& t = box->tasks[i % kTaskSlots];
      const Deadline d = Deadline::after_ms(10000);
      while (load_task_state(t) != TaskState::kReady) {
        if (d.expired()) return child_ok.store(false);
        std::this_thread::yield();  // 2 shared cores: let the parent run
      }
      if (t.task_seq != static_cast<uint64_t>(i) || t.scalar_count != 1 || t.scalars[0] != static_cast<uint64_t>(i) * 7)
        child_ok.store(false);
      store_task_state(t, TaskState::kRunning);
      t.result.store(i % 2 ? Status::Ok() : internal_error("round " + std::to_string(i)));
      store_task_state(t, TaskState::kDone);
    }
  });
  bool parent_ok = true;
  for (int i = 1; i <= kRounds && parent_ok; ++i) {
    TaskSlot& t = box->tasks[i % kTaskSlots];
    t.task_seq = static_cast<uint64_t>(i);
    t.scalar_count = 1;
    t.scalars[0] = static_cast<uint64_t>(i) * 7;
    store_task_state(t, TaskState::kReady);
    const Deadline d = Deadline::after_ms(10000);
    while (load_task_state(t) != TaskState::kDone) {
      if (d.expired()) {
        parent_ok = false;
        break;
      }
      std::this_thread::yield();
    }
    if (!parent_ok) break;
    const Status s = t.result.load();
    EXPECT_EQ(s.ok(), i % 2 == 1) << "round " << i;
    if (!s.ok()) {
      EXPECT_EQ(s.message(), "round " + std::to_string(i));
    }
    store_task_state(t, TaskState::kIdle);
  }
  child.join();
  EXPECT_TRUE(parent_ok);
  EXPECT_TRUE(child_ok.load());
}

}  // namespace
}  // namespace taskring::node
