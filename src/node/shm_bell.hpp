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

// Parks on `bell` and `also` until either epoch moves from its `seen` value
// or `timeout_ns` passes (bell alone where the kernel lacks futex_waitv).
void bell_park_either(ShmBell& bell, uint32_t seen, ShmBell& also, uint32_t also_seen, uint64_t timeout_ns);

// Whether a ring of a second bell reaches a waiter of bell_wait_either
// (futex_waitv); when false, wakers must ring each waiter's own bell.
bool bell_either_available();

namespace bell_detail {
template <typename Pred, typename Between>
Status wait(ShmBell& bell, ShmBell* also, Pred&& pred, Between&& between, Deadline deadline, const char* what,
            uint64_t slice_ns, uint32_t spin) {
  for (uint32_t i = 0, n = spin < bell.spin ? spin : bell.spin; i < n; ++i) {
    if (pred()) return Status::Ok();
    Waiter::spin_pause(i);
  }
  auto unpark = [&] {
    bell.parked.fetch_sub(1, std::memory_order_relaxed);
    if (also != nullptr) also->parked.fetch_sub(1, std::memory_order_relaxed);
  };
  while (true) {
    bell.parked.fetch_add(1, std::memory_order_seq_cst);
    if (also != nullptr) also->parked.fetch_add(1, std::memory_order_seq_cst);
    const uint32_t seen = bell.epoch.load(std::memory_order_seq_cst);
    const uint32_t also_seen = also != nullptr ? also->epoch.load(std::memory_order_seq_cst) : 0;
    if (pred()) {
      unpark();
      return Status::Ok();
    }
    Status b = between();
    if (!b.ok()) {
      unpark();
      return b;
    }
    uint64_t left = deadline.remaining_ns();
    if (left == 0) {
      unpark();
      return deadline_exceeded(std::string("deadline passed while waiting for ") + what);
    }
    const uint64_t slice = left < slice_ns ? left : slice_ns;
    if (also != nullptr) {
      bell_park_either(bell, seen, *also, also_seen, slice);
    } else {
      bell_park(bell, seen, slice);
    }
    unpark();
  }
}
}  // namespace bell_detail

// Waits until `pred()` holds (OK), `deadline` passes (DEADLINE_EXCEEDED
// naming `what`), or `between()` — called after every park slice and before
// the first park — returns non-OK (that status).
template <typename Pred, typename Between>
Status bell_wait(ShmBell& bell, Pred&& pred, Between&& between, Deadline deadline, const char* what, uint64_t slice_ns,
                 uint32_t spin = kDefaultSpin) {
  return bell_detail::wait(bell, nullptr, pred, between, deadline, what, slice_ns, spin);
}

// The same, woken by a ring of `bell` or of `also`: a child parks on its own
// mailbox bell and on the node's group bell, so that the parent starts every
// member of a group with one wake (see Engine::launch).
template <typename Pred, typename Between>
Status bell_wait_either(ShmBell& bell, ShmBell& also, Pred&& pred, Between&& between, Deadline deadline,
                        const char* what, uint64_t slice_ns) {
  return bell_detail::wait(bell, &also, pred, between, deadline, what, slice_ns, kDefaultSpin);
}

}  // namespace taskring::node
