// ShmBell: a process-shared doorbell; waiting is spin-then-park on a futex.
//
// The base Waiter parks on a private futex, which never matches across
// processes; a bell lives in a MAP_SHARED region and uses the shared futex
// ops, so a child can wake the parent and back. Protocol: the waker changes
// its state word (release), then ring(); the sleeper re-checks its predicate
// after announcing the park, so a ring is never lost (same Dekker argument
// as base/waiter.hpp). Parks are sliced (`slice_ns`) so the sleeper can run
// a liveness check between slices: a dead peer never leaves a waiter parked
// forever, and no wait is unbounded. With 8 chips + parent on 2 cores the
// spin phase is skipped (ShmBell::spin = 0) and every idle wait parks.
#pragma once

#include <atomic>
#include <cstdint>

#include "taskring/base/clock.hpp"
#include "taskring/base/status.hpp"
#include "taskring/base/waiter.hpp"

namespace taskring::node {

inline constexpr uint32_t kDefaultSpin = 4000;

struct alignas(64) ShmBell {
  std::atomic<uint32_t> epoch{0};
  std::atomic<uint32_t> parked{0};
  // At most this many checks before a waiter on this bell parks. The
  // NodeWorker sets 0 when its processes outnumber the CPUs (base/cpus.hpp):
  // there a spinning waiter only delays the process it waits for.
  uint32_t spin = kDefaultSpin;
};
static_assert(std::atomic<uint32_t>::is_always_lock_free);

// Wakes every process parked on `bell`. Cheap when none is parked.
void bell_ring(ShmBell& bell);

// Parks on `bell` until its epoch moves from `seen` or `timeout_ns` passes.
void bell_park(ShmBell& bell, uint32_t seen, uint64_t timeout_ns);

// Waits until `pred()` holds (OK), `deadline` passes (DEADLINE_EXCEEDED
// naming `what`), or `between()` — called after every park slice and before
// the first park — returns non-OK (that status).
template <typename Pred, typename Between>
Status bell_wait(ShmBell& bell, Pred&& pred, Between&& between, Deadline deadline, const char* what,
                 uint64_t slice_ns, uint32_t spin = kDefaultSpin) {
  for (uint32_t i = 0, n = spin < bell.spin ? spin : bell.spin; i < n; ++i) {
    if (pred()) return Status::Ok();
    Waiter::cpu_relax();
  }
  while (true) {
    bell.parked.fetch_add(1, std::memory_order_seq_cst);
    uint32_t seen = bell.epoch.load(std::memory_order_seq_cst);
    if (pred()) {
      bell.parked.fetch_sub(1, std::memory_order_relaxed);
      return Status::Ok();
    }
    Status b = between();
    if (!b.ok()) {
      bell.parked.fetch_sub(1, std::memory_order_relaxed);
      return b;
    }
    uint64_t left = deadline.remaining_ns();
    if (left == 0) {
      bell.parked.fetch_sub(1, std::memory_order_relaxed);
      return deadline_exceeded(std::string("deadline passed while waiting for ") + what);
    }
    bell_park(bell, seen, left < slice_ns ? left : slice_ns);
    bell.parked.fetch_sub(1, std::memory_order_relaxed);
  }
}

}  // namespace taskring::node
