#include "taskring/base/waiter.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace taskring {
namespace {

using ::testing::HasSubstr;

// Generous: these bounds only stop a broken waiter from hanging the suite;
// the tests never assert how quickly a wake arrives.
constexpr uint64_t kGenerousMs = 20'000;

TEST(Waiter, ReturnsAtOnceWhenPredicateHolds) {
  Waiter w;
  EXPECT_TRUE(w.wait([] { return true; }, Deadline::after_ms(kGenerousMs)).ok());
}

TEST(Waiter, TimesOutWithDeadlineExceededNamingTheWait) {
  Waiter w;
  Status s = w.wait([] { return false; }, Deadline::after_ms(5), "ring space");
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(s.message(), HasSubstr("ring space"));
}

TEST(Waiter, ExpiredDeadlineStillChecksPredicateOnce) {
  Waiter w;
  EXPECT_TRUE(w.wait([] { return true; }, Deadline::after_ns(0), "x", 0).ok());
  EXPECT_EQ(w.wait([] { return false; }, Deadline::after_ns(0), "x", 0).code(), StatusCode::kDeadlineExceeded);
}

TEST(Waiter, WakesOnNotify) {
  Waiter w;
  std::atomic<bool> flag{false};
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    flag.store(true, std::memory_order_release);
    w.notify_all();
  });
  // spin_iterations = 0: go straight to parking so the futex path is exercised.
  Status s = w.wait([&] { return flag.load(std::memory_order_acquire); }, Deadline::after_ms(kGenerousMs), "flag", 0);
  t.join();
  EXPECT_TRUE(s.ok()) << s.to_string();
}

TEST(Waiter, NotifyWithoutWaitersIsHarmless) {
  Waiter w;
  for (int i = 0; i < 1000; ++i) w.notify_all();
  EXPECT_TRUE(w.wait([] { return true; }, Deadline::after_ms(1)).ok());
}

TEST(Waiter, ManyWaitersAllWake) {
  Waiter w;
  std::atomic<int> stage{0};
  constexpr int kThreads = 8;
  std::atomic<int> woke{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < kThreads; ++i) {
    ts.emplace_back([&] {
      Status s = w.wait([&] { return stage.load() >= 1; }, Deadline::after_ms(kGenerousMs), "stage", 100);
      if (s.ok()) woke.fetch_add(1);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  stage.store(1);
  w.notify_all();
  for (auto& t : ts) t.join();
  EXPECT_EQ(woke.load(), kThreads);
}

// A producer hands out tokens one by one; each consumer waits for the next
// one. Exercises many park/notify races.
TEST(Waiter, PingPongDoesNotLoseWakes) {
  Waiter to_consumer, to_producer;
  std::atomic<int> value{0};
  constexpr int kRounds = 2000;
  std::atomic<bool> failed{false};
  std::thread consumer([&] {
    for (int i = 1; i <= kRounds && !failed; ++i) {
      Status s = to_consumer.wait([&] { return failed || value.load() == 2 * i - 1; }, Deadline::after_ms(kGenerousMs),
                                  "odd", 50);
      if (!s.ok()) failed = true;
      value.store(2 * i);
      to_producer.notify_all();
    }
  });
  for (int i = 1; i <= kRounds && !failed; ++i) {
    Status s = to_producer.wait([&] { return failed || value.load() == 2 * i - 2; }, Deadline::after_ms(kGenerousMs),
                                "even", 50);
    if (!s.ok()) failed = true;
    value.store(2 * i - 1);
    to_consumer.notify_all();
  }
  consumer.join();
  EXPECT_FALSE(failed.load());
  EXPECT_EQ(value.load(), 2 * kRounds);
}

}  // namespace
}  // namespace taskring
