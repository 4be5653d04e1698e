#include "taskring/base/shared_futex.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <atomic>
#include <new>
#include <thread>

#include "taskring/base/clock.hpp"

namespace taskring {
namespace {

// Long enough that a wait which was not woken is told apart from one that
// was: the tests assert "returned before its timeout", never a latency.
constexpr uint64_t kLongNs = 20'000'000'000ull;

struct SharedWords {
  std::atomic<uint32_t> a{0};
  alignas(64) std::atomic<uint32_t> b{0};
};

// The words live in a MAP_SHARED mapping, as the node's bells do.
class SharedFutexEither : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!shared_futex_wait_either_available()) GTEST_SKIP() << "kernel without futex_waitv";
    mem_ = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(mem_, MAP_FAILED);
    w_ = new (mem_) SharedWords();
  }
  void TearDown() override {
    if (mem_ != nullptr && mem_ != MAP_FAILED) munmap(mem_, 4096);
  }
  void* mem_ = nullptr;
  SharedWords* w_ = nullptr;
};

TEST_F(SharedFutexEither, AWakeOfTheSecondWordEndsTheWait) {
  std::atomic<bool> parked{false};
  uint64_t waited_ns = 0;
  std::thread waiter([&] {
    const uint64_t t0 = mono_ns();
    parked.store(true);
    while (w_->b.load() == 0) shared_futex_wait_either(&w_->a, 0, &w_->b, 0, kLongNs);
    waited_ns = mono_ns() - t0;
  });
  while (!parked.load()) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let it reach the kernel
  w_->b.store(1);
  shared_futex_wake_all(&w_->b);
  waiter.join();
  EXPECT_LT(waited_ns, kLongNs / 2);
}

TEST_F(SharedFutexEither, AWakeOfTheFirstWordEndsTheWaitToo) {
  std::atomic<bool> parked{false};
  uint64_t waited_ns = 0;
  std::thread waiter([&] {
    const uint64_t t0 = mono_ns();
    parked.store(true);
    while (w_->a.load() == 0) shared_futex_wait_either(&w_->a, 0, &w_->b, 0, kLongNs);
    waited_ns = mono_ns() - t0;
  });
  while (!parked.load()) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  w_->a.store(1);
  shared_futex_wake_all(&w_->a);
  waiter.join();
  EXPECT_LT(waited_ns, kLongNs / 2);
}

TEST_F(SharedFutexEither, AWordThatAlreadyMovedDoesNotSleep) {
  w_->b.store(7);
  const uint64_t t0 = mono_ns();
  shared_futex_wait_either(&w_->a, 0, &w_->b, 0, kLongNs);
  EXPECT_LT(mono_ns() - t0, kLongNs / 2);
}

TEST_F(SharedFutexEither, EndsAtItsTimeoutWhenNothingMoves) {
  const uint64_t t0 = mono_ns();
  shared_futex_wait_either(&w_->a, 0, &w_->b, 0, 5'000'000);
  EXPECT_GE(mono_ns() - t0, 4'000'000u);  // the kernel's timer, less rounding
}

}  // namespace
}  // namespace taskring
