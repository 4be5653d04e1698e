// The reuse handshake of a global domain shared by all its member nodes
// (see domain_rejoin.hpp).
#include "domain_rejoin.hpp"

#include <cstring>
#include <limits>
#include <string>

#include "taskring/base/clock.hpp"
#include "taskring/base/shared_futex.hpp"
#include "taskring/base/waiter.hpp"

namespace taskring::net {

namespace cm = kernels::comm;

namespace {

constexpr uint32_t kLeft = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kSliceNs = 50'000'000;
constexpr int kSpins = 1000;

enum class Seen { kAll, kLeft, kAborted, kLate };

cm::DomainHeader& header(const RejoinView& v) { return *reinterpret_cast<cm::DomainHeader*>(v.base); }

// Where the words stand against `target`: every rank there, a node gone, or
// the domain aborted; nullopt while some rank is still behind.
bool scan(const cm::DomainHeader& h, uint32_t target, Seen* out) {
  if (h.abort.load(std::memory_order_acquire) != 0) {
    *out = Seen::kAborted;
    return true;
  }
  bool all = true;
  for (int r = 0; r < h.nranks; ++r) {
    const uint32_t w = h.arrived[r].load(std::memory_order_acquire);
    if (w == kLeft) {
      *out = Seen::kLeft;
      return true;
    }
    all = all && w >= target;
  }
  if (all) *out = Seen::kAll;
  return all;
}

// Spins briefly, then parks on the header bell (rung by every mark, leave
// and abort) until scan() decides or the deadline passes.
Seen wait_marks(cm::DomainHeader& h, uint32_t target, const Deadline& deadline) {
  Seen s = Seen::kLate;
  for (int i = 0; i < kSpins; ++i) {
    if (scan(h, target, &s)) return s;
    Waiter::cpu_relax();
  }
  while (true) {
    h.bell.parked.fetch_add(1, std::memory_order_seq_cst);
    const uint32_t seen = h.bell.epoch.load(std::memory_order_seq_cst);
    const bool decided = scan(h, target, &s);
    const uint64_t left = deadline.remaining_ns();
    if (!decided && left > 0) shared_futex_wait(&h.bell.epoch, seen, left < kSliceNs ? left : kSliceNs);
    h.bell.parked.fetch_sub(1, std::memory_order_relaxed);
    if (decided) return s;
    if (left == 0) return Seen::kLate;
  }
}

void mark(const RejoinView& v, uint32_t word) {
  cm::DomainHeader& h = header(v);
  for (int r : v.local) h.arrived[r].store(word, std::memory_order_release);
  cm::ring(h.bell);
}

std::string behind(const cm::DomainHeader& h, uint32_t target) {
  std::string s;
  for (int r = 0; r < h.nranks; ++r)
    if (h.arrived[r].load(std::memory_order_acquire) < target) s += (s.empty() ? "" : ",") + std::to_string(r);
  return s;
}

}  // namespace

void leave_shared(const RejoinView& v) { mark(v, kLeft); }

Expected<bool> rejoin_shared(const RejoinView& v, uint32_t use, uint64_t timeout_ms) {
  cm::DomainHeader& h = header(v);
  const std::string who = "global comm domain '" + std::string(h.name) + "'";
  if (use == 0 || use >= kLeft / 2) return internal_error(who + ": reuse " + std::to_string(use) + " out of range");
  const Deadline deadline = Deadline::after_ms(timeout_ms);
  const uint32_t done = 2 * use, cleared = 2 * use + 1;
  // Step 1: every node's last use is fenced (or some node dropped it).
  mark(v, done);
  switch (wait_marks(h, done, deadline)) {
    case Seen::kAll: break;
    case Seen::kLeft:
    case Seen::kAborted: leave_shared(v); return false;
    case Seen::kLate:
      leave_shared(v);
      return deadline_exceeded(who + ": reusing it, ranks " + behind(h, done) + " did not come back within " +
                               std::to_string(timeout_ms) + " ms (does every member node allocate it again?)");
  }
  // Step 2: this node's ranks start from zero, as after a fresh attach.
  for (int r : v.local) {
    std::memset(v.base + v.layout.window(r), 0, static_cast<size_t>(v.layout.window_size));
    std::memset(v.base + v.layout.sync(r), 0, sizeof(cm::SyncBlock));
  }
  if (v.owns_header) {
    h.barrier_arrivals.store(0, std::memory_order_relaxed);
    h.barrier_done.store(0, std::memory_order_relaxed);
  }
  mark(v, cleared);
  const Seen s = wait_marks(h, cleared, deadline);
  if (s == Seen::kAll) return true;
  leave_shared(v);
  if (s == Seen::kLate)
    return deadline_exceeded(who + ": reusing it, ranks " + behind(h, cleared) + " did not clear their windows within " +
                             std::to_string(timeout_ms) + " ms");
  return aborted(who + ": a member node " + (s == Seen::kLeft ? "left" : "aborted") +
                 " it after every node had agreed to reuse it");
}

}  // namespace taskring::net
