// SimDevice under concurrent use (also run under TSan/ASan: label sanitize).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "sim_test_util.hpp"

namespace taskring {
namespace {

using taskring::testing::make_sim;

TEST(SimDeviceConcurrency, EightThreadsAllocCopyFree) {
  auto dev = make_sim({}, 64);
  constexpr int kThreads = 8;
  constexpr int kRounds = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&, t] {
      std::vector<uint8_t> in(1024 + 64 * t), out(in.size());
      for (int r = 0; r < kRounds; ++r) {
        for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(t * 31 + r + i);
        auto a = dev->malloc(in.size(), 64 << (r % 4), "worker");
        if (!a.ok()) {
          failures++;
          continue;
        }
        bool ok = dev->copy_to_device(*a, in.data(), in.size()).ok() &&
                  dev->copy_from_device(out.data(), *a, out.size()).ok() && in == out;
        auto v = dev->device_view(*a, in.size());
        ok = ok && v.ok() && static_cast<uint8_t*>(*v)[5] == in[5];
        if (!dev->free(*a).ok() || !ok) failures++;
        // Reads of the counters race with the writers by design.
        (void)dev->counters();
      }
    });
  }
  for (auto& th : ts) th.join();
  EXPECT_EQ(failures.load(), 0);
  DeviceCounters c = dev->counters();
  EXPECT_EQ(c.alloc_calls, uint64_t{kThreads * kRounds});
  EXPECT_EQ(c.free_calls, uint64_t{kThreads * kRounds});
  EXPECT_EQ(c.h2d_calls, uint64_t{kThreads * kRounds});
  EXPECT_EQ(c.d2h_calls, uint64_t{kThreads * kRounds});
  EXPECT_EQ(c.live_allocations, 0u);
  EXPECT_LE(c.peak_bytes, uint64_t{kThreads} * (1024 + 64 * kThreads));
  EXPECT_TRUE(dev->finalize().ok());
}

TEST(SimDeviceConcurrency, SharedAllocationDisjointRanges) {
  auto dev = make_sim({}, 16);
  constexpr int kThreads = 8;
  constexpr uint64_t kSlice = 4096;
  auto a = dev->malloc(kThreads * kSlice, 4096, "shared");
  ASSERT_TRUE(a.ok());
  std::vector<std::thread> ts;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&, t] {
      std::vector<uint8_t> in(kSlice, static_cast<uint8_t>(t + 1)), out(kSlice);
      for (int r = 0; r < 100; ++r) {
        if (!dev->copy_to_device(*a + t * kSlice, in.data(), kSlice).ok()) failures++;
        if (!dev->copy_from_device(out.data(), *a + t * kSlice, kSlice).ok() || out != in) failures++;
      }
    });
  }
  for (auto& th : ts) th.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_TRUE(dev->free(*a).ok());
}

}  // namespace
}  // namespace taskring
