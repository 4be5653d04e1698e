// The "empty" task body: one relaxed atomic increment of a per-thread,
// cache-line-padded counter. It cannot be optimised away, costs a few ns, does
// not bounce cache lines between workers, and lets the harness check that
// every submitted task ran exactly once.
#pragma once

#include <atomic>
#include <cstdint>

namespace peers {

inline constexpr int kMaxCounterThreads = 256;

struct alignas(64) PaddedCounter {
  std::atomic<uint64_t> value{0};
};

inline PaddedCounter g_counters[kMaxCounterThreads];
inline PaddedCounter g_overflow;  // shared by threads beyond kMaxCounterThreads
inline std::atomic<int> g_next_thread{0};

inline PaddedCounter* my_counter() {
  static thread_local PaddedCounter* mine = [] {
    int id = g_next_thread.fetch_add(1, std::memory_order_relaxed);
    return id < kMaxCounterThreads ? &g_counters[id] : nullptr;
  }();
  return mine;
}

inline void task_body() {
  if (PaddedCounter* c = my_counter()) {
    // Single writer per counter: load + store, no locked instruction needed.
    c->value.store(c->value.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  } else {
    g_overflow.value.fetch_add(1, std::memory_order_relaxed);
  }
}

// Call only while no task runs (between repetitions).
inline uint64_t executed_tasks() {
  uint64_t sum = g_overflow.value.load(std::memory_order_acquire);
  for (auto& c : g_counters) sum += c.value.load(std::memory_order_acquire);
  return sum;
}

inline void reset_executed() {
  g_overflow.value.store(0, std::memory_order_release);
  for (auto& c : g_counters) c.value.store(0, std::memory_order_release);
}

}  // namespace peers
