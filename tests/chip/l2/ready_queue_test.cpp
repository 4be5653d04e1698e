// The ready queue (l2/ready_queue.hpp): FIFO, full and empty exactly at
// its capacity, over many laps of a small ring (each cell stores its
// sequence number minus its index, so the arithmetic must hold from the
// zero page on and across every wrap), re-init, and many producers and
// consumers handing over every item exactly once.
#include "l2/ready_queue.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "test_scale.hpp"

namespace taskring::l2 {
namespace {

TEST(ReadyQueue, FullAndEmptyAtItsCapacityOverManyLaps) {
  ReadyQueue<int> q;
  q.init(3);  // rounded up to 4
  std::vector<int> items(4);
  for (int lap = 0; lap < 1000; ++lap) {
    ASSERT_EQ(q.pop(), nullptr) << "lap " << lap;
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(q.push(&items[i])) << "lap " << lap << " item " << i;
    ASSERT_FALSE(q.push(&items[0])) << "lap " << lap << ": a fifth item fit";
    for (int i = 0; i < 4; ++i) ASSERT_EQ(q.pop(), &items[i]) << "lap " << lap << " item " << i;
  }
  // Half laps: the ring's start moves through every cell.
  for (int step = 0; step < 999; ++step) {
    ASSERT_TRUE(q.push(&items[step % 4]));
    ASSERT_TRUE(q.push(&items[(step + 1) % 4]));
    ASSERT_EQ(q.pop(), &items[step % 4]);
    ASSERT_EQ(q.pop(), &items[(step + 1) % 4]);
    ASSERT_TRUE(q.empty_hint());
  }
}

// The one-thread forms (a run whose tasks all live on one thread) keep the
// same cells: mixed with the concurrent forms, in any order, the queue stays
// FIFO and full and empty exactly at its capacity, over many laps.
TEST(ReadyQueue, AloneFormsMixWithTheConcurrentOnes) {
  ReadyQueue<int> q;
  q.init(4);
  std::vector<int> items(4);
  for (int lap = 0; lap < 1000; ++lap) {
    const bool push_alone = lap % 2 == 0, pop_alone = lap % 3 == 0;
    ASSERT_EQ(pop_alone ? q.pop_alone() : q.pop(), nullptr) << "lap " << lap;
    for (int i = 0; i < 4; ++i) {
      ASSERT_TRUE(push_alone ? q.push_alone(&items[i]) : q.push(&items[i])) << "lap " << lap << " item " << i;
    }
    ASSERT_FALSE(push_alone ? q.push_alone(&items[0]) : q.push(&items[0])) << "lap " << lap << ": a fifth item fit";
    for (int i = 0; i < 4; ++i) {
      ASSERT_EQ((i + lap) % 2 == 0 ? q.pop_alone() : q.pop(), &items[i]) << "lap " << lap << " item " << i;
    }
  }
}

TEST(ReadyQueue, InitAgainStartsEmptyWithTheNewCapacity) {
  ReadyQueue<int> q;
  int a = 0;
  q.init(2);
  ASSERT_TRUE(q.push(&a));
  ASSERT_TRUE(q.push(&a));
  ASSERT_FALSE(q.push(&a));
  q.init(8);
  EXPECT_EQ(q.pop(), nullptr);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(q.push(&a)) << i;
  EXPECT_FALSE(q.push(&a));
}

TEST(ReadyQueue, ManyProducersAndConsumersHandOverEveryItemOnce) {
  constexpr int kProducers = 4, kConsumers = 4;
  const int per_producer = testing::kSanitizedBuild ? 5000 : 50000;
  ReadyQueue<int> q;
  q.init(64);  // small: producers meet a full queue and consumers an empty one
  std::vector<int> items(static_cast<size_t>(kProducers * per_producer));
  std::vector<std::atomic<int>> seen(items.size());
  std::atomic<int> taken{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p)
    threads.emplace_back([&, p] {
      for (int i = 0; i < per_producer; ++i)
        while (!q.push(&items[static_cast<size_t>(p * per_producer + i)])) std::this_thread::yield();
    });
  for (int c = 0; c < kConsumers; ++c)
    threads.emplace_back([&] {
      while (taken.load() < static_cast<int>(items.size())) {
        if (int* it = q.pop()) {
          seen[static_cast<size_t>(it - items.data())].fetch_add(1);
          taken.fetch_add(1);
        } else {
          std::this_thread::yield();
        }
      }
    });
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i].load(), 1) << "item " << i;
  EXPECT_EQ(q.pop(), nullptr);
}

}  // namespace
}  // namespace taskring::l2
