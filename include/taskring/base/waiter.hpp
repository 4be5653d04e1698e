// Waiter: spin briefly, then park on a futex, always with a deadline.
//
// The machines taskring runs on may have 2 hardware threads shared by many
// virtual cores, so an idle thread must not keep spinning (DESIGN.md §4). A
// waiter spins `spin_iterations` checks of the predicate, then parks until a
// notify or the deadline. notify_all() is cheap when nobody is parked (one
// relaxed load), so producers can call it on every state change.
#pragma once

#include <atomic>
#include <cstdint>

#include "taskring/base/clock.hpp"
#include "taskring/base/status.hpp"

namespace taskring {

class Waiter {
 public:
  Waiter() = default;
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;

  // Waits until `pred()` returns true (OK) or `deadline` passes
  // (DEADLINE_EXCEEDED naming `what`). `pred` is re-checked after every wake;
  // spurious wakes are harmless.
  template <typename Pred>
  Status wait(Pred&& pred, Deadline deadline, const char* what = "condition", uint32_t spin_iterations = 2000) {
    for (uint32_t i = 0; i < spin_iterations; ++i) {
      if (pred()) return Status::Ok();
      cpu_relax();
    }
    while (true) {
      uint32_t seen = epoch_.load(std::memory_order_acquire);
      if (pred()) return Status::Ok();
      uint64_t left = deadline.remaining_ns();
      if (left == 0) return deadline_status(what);
      park(seen, left > kMaxParkNs ? kMaxParkNs : left);
    }
  }

  // Wakes every parked waiter.
  void notify_all() {
    epoch_.fetch_add(1, std::memory_order_release);
    if (parked_.load(std::memory_order_acquire) != 0) wake_all();
  }

  static inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
  }

 private:
  // Parks re-check the predicate at least this often, so a lost wake costs a
  // bounded delay instead of a hang.
  static constexpr uint64_t kMaxParkNs = 50'000'000;
  void park(uint32_t seen_epoch, uint64_t timeout_ns);
  void wake_all();
  static Status deadline_status(const char* what);

  std::atomic<uint32_t> epoch_{0};
  std::atomic<uint32_t> parked_{0};
};

}  // namespace taskring
