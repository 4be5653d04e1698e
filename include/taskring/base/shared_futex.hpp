// Process-shared futex wait/wake on a 32-bit word in a MAP_SHARED mapping.
//
// The base Waiter parks on a private futex (keyed by the virtual address),
// which never matches across processes. These use the shared ops, keyed by
// the physical page, so processes that map the same memory (at any address)
// meet on the same word: the node's mailboxes and the comm domains' signal
// blocks. Callers own the protocol (announce the park, re-check, then wait).
#pragma once

#include <atomic>
#include <cstdint>

namespace taskring {

// Sleeps while `*word == seen`, at most `timeout_ns` (spurious returns are
// possible: callers re-check their condition).
void shared_futex_wait(std::atomic<uint32_t>* word, uint32_t seen, uint64_t timeout_ns);
// Wakes every process sleeping on `word`.
void shared_futex_wake_all(std::atomic<uint32_t>* word);

// Whether the kernel has futex_waitv (Linux 5.16+), which
// shared_futex_wait_either needs. Probed once.
bool shared_futex_wait_either_available();
// Sleeps while `*a == seen_a` and `*b == seen_b`, at most `timeout_ns`: a
// wake of either word ends it (spurious returns are possible). Without
// futex_waitv it waits on `a` alone, so callers that rely on a wake of `b`
// check shared_futex_wait_either_available() first.
void shared_futex_wait_either(std::atomic<uint32_t>* a, uint32_t seen_a, std::atomic<uint32_t>* b, uint32_t seen_b,
                              uint64_t timeout_ns);
// The same over `n` words (1 ≤ n ≤ kSharedFutexWaitMax): sleeps while every
// `*words[i] == seen[i]`; without futex_waitv it waits on words[0] alone.
inline constexpr int kSharedFutexWaitMax = 128;
void shared_futex_wait_any(std::atomic<uint32_t>* const* words, const uint32_t* seen, int n, uint64_t timeout_ns);

}  // namespace taskring
