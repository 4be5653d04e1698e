// Waiter: spin briefly, then park on a futex, always with a deadline.
//
// The machines taskring runs on may have 2 hardware threads shared by many
// virtual cores, so an idle thread must not keep spinning (docs/architecture.md, "Decisions"). A
// waiter spins `spin_iterations` checks of the predicate, then parks until a
// notify or the deadline. notify_all() is cheap when nobody is parked (one
// relaxed load), so producers can call it on every state change.
#pragma once

#include <sched.h>

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
      spin_pause(i);
    }
    while (true) {
      // Announce the park before the last predicate check (Dekker with
      // notify_all): either the notifier sees parked_ > 0 and bumps the
      // epoch, or this check sees the notifier's state change.
      parked_.fetch_add(1, std::memory_order_seq_cst);
      uint32_t seen = epoch_.load(std::memory_order_seq_cst);
      if (pred()) {
        parked_.fetch_sub(1, std::memory_order_relaxed);
        return Status::Ok();
      }
      uint64_t left = deadline.remaining_ns();
      if (left == 0) {
        parked_.fetch_sub(1, std::memory_order_relaxed);
        return deadline_status(what);
      }
      park(seen, left > kMaxParkNs ? kMaxParkNs : left);
      parked_.fetch_sub(1, std::memory_order_relaxed);
    }
  }

  // Wakes every parked waiter.
  // Cheap when nobody is parked: one fence and one load. The caller must have
  // made its state change visible (any atomic store) before calling.
  void notify_all() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (parked_.load(std::memory_order_seq_cst) == 0) return;
    epoch_.fetch_add(1, std::memory_order_seq_cst);
    wake_all();
  }

  // notify_all() without its fence, for hot paths whose state change is
  // already ordered before this call in the seq_cst total order: it was a
  // seq_cst read-modify-write, or a seq_cst fence separates it from this
  // call. The waiter's predicate must read that state with seq_cst loads.
  // (The fence was one of the two full barriers an L2 task paid per hand-off.)
  void notify_all_ordered() {
    notify_all_ordered_unless([] { return false; });
  }
  // notify_all_ordered(), skipped when `covered()` (called only if somebody
  // is parked) says that a thread still polling will see the state change:
  // a futex wake is a system call, and a woken thread that finds its work
  // already taken parks again (the wake cost more than the task).
  template <typename Covered>
  void notify_all_ordered_unless(Covered&& covered) {
    if (parked_.load(std::memory_order_seq_cst) == 0) return;
    if (covered()) return;
    epoch_.fetch_add(1, std::memory_order_seq_cst);
    wake_all();
  }

  // Parks at most `timeout_ns` unless notified; for loops that poll several
  // conditions themselves. Returns at once if a notify happened since
  // `begin_park()`.
  uint32_t begin_park() {
    parked_.fetch_add(1, std::memory_order_seq_cst);
    return epoch_.load(std::memory_order_seq_cst);
  }
  void finish_park(uint32_t seen_epoch, uint64_t timeout_ns) {
    park(seen_epoch, timeout_ns);
    parked_.fetch_sub(1, std::memory_order_relaxed);
  }
  void cancel_park() { parked_.fetch_sub(1, std::memory_order_relaxed); }

  // Step `step` of a spin that waits for another thread or process: a
  // pause, and every 128th step a yield of the CPU. When the peer sits on
  // the same CPU (the other ones busy, or a process pinned to one), a pure
  // spin runs its whole budget (50-110 µs here) before its park lets the
  // peer run: bench_node measured no-op SUB runs at 62 µs + 111 µs per task
  // that way, 12 µs + 10 µs per task with the yield (and 1-2 µs when the
  // two sit on two CPUs, where the yield costs one syscall per 128 steps).
  static inline void spin_pause(uint32_t step) {
    cpu_relax();
    if ((step & 127) == 127) sched_yield();
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
