#include "taskring/base/process_threads.hpp"

#include <pthread.h>

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "test_scale.hpp"

namespace taskring {
namespace {

// Threads this process runs besides the test's own. TSan's runtime starts a
// background thread at the first pthread_create, so one thread is started
// and joined first.
int baseline() {
  std::thread([] {}).join();
  auto t = process_threads(1, Deadline::after_ms(100));
  return t.ok() ? t->count : -1;
}

// Without the settle, 6–21 of 20,000 counts right after a join still saw the
// joined thread on a 2-vCPU guest; the settle must hide every one of them.
TEST(ProcessThreads, AJustJoinedThreadIsNotCounted) {
  const int joins = testing::kSanitizedBuild ? 2000 : 20000;
  const int base = baseline();
  ASSERT_GE(base, 1);
  int miscounts = 0;
  std::string last;
  for (int i = 0; i < joins; ++i) {
    std::thread([] {}).join();
    auto t = process_threads(base, Deadline::after_ms(100));
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    if (t->count != base) ++miscounts, last = t->names;
    if (miscounts > 10) break;  // each miss waits the whole settle
  }
  EXPECT_EQ(miscounts, 0) << "last seen: " << last;
}

TEST(ProcessThreads, ARunningThreadIsCountedAndNamedAfterTheSettle) {
  const int base = baseline();
  ASSERT_GE(base, 1);
  std::atomic<bool> stop{false};
  std::atomic<bool> named{false};
  std::thread runner([&] {
    pthread_setname_np(pthread_self(), "pt_runner");
    named.store(true);
    while (!stop.load()) std::this_thread::yield();
  });
  while (!named.load()) std::this_thread::yield();
  const uint64_t t0 = mono_ns();
  auto t = process_threads(base, Deadline::after_ms(20));
  const uint64_t waited_ms = (mono_ns() - t0) / 1'000'000;
  stop.store(true);
  runner.join();
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->count, base + 1);
  EXPECT_NE(t->names.find("pt_runner (tid "), std::string::npos) << t->names;
  EXPECT_GE(waited_ms, 20u) << "a thread that keeps running must be re-read until the settle passes";
}

TEST(ProcessThreads, AtOrBelowTheExpectedCountItReturnsAtOnce) {
  const int base = baseline();
  ASSERT_GE(base, 1);
  const uint64_t t0 = mono_ns();
  auto t = process_threads(base + 3, Deadline::after_ms(1000));
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->count, base);
  EXPECT_LT(mono_ns() - t0, 500'000'000u);
}

}  // namespace
}  // namespace taskring
