// Kernel-side comm primitives over a domain's windows (see comm.hpp).
#include "taskring/kernels/comm.hpp"
#include "taskring/base/align.hpp"

#include "taskring/kernels/comm_remote.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "taskring/base/clock.hpp"
#include "taskring/base/cpus.hpp"
#include "taskring/base/shared_futex.hpp"
#include "taskring/base/waiter.hpp"

namespace taskring::kernels::comm {

namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kParkSliceNs = 50'000'000;  // re-check abort/deadline at least this often

bool compare(uint32_t v, Cmp cmp, uint32_t x) {
  switch (cmp) {
    case Cmp::kEq: return v == x;
    case Cmp::kNe: return v != x;
    case Cmp::kGt: return v > x;
    case Cmp::kGe: return v >= x;
    case Cmp::kLt: return v < x;
    case Cmp::kLe: return v <= x;
  }
  return false;
}

const char* cmp_name(Cmp c) {
  static const char* const kNames[] = {"==", "!=", ">", ">=", "<", "<="};
  const auto i = static_cast<uint32_t>(c);
  return i < 6 ? kNames[i] : "?";
}

// Waits spin-then-park on `bell` until `pred()`. On an abort or the
// deadline it reports "domain 'x' rank r: <what>: <why>", where `what()`
// describes what is still missing (evaluated only on failure). When ranks
// outnumber the CPUs the spin phase gives way to a yield phase
// (CommContext::spin, yield_ns).
template <typename Pred, typename What>
bool wait_on(const KernelArgs& k, const CommContext& c, CommBell& bell, Pred&& pred, What&& what) {
  DomainHeader& h = header_of(c);
  auto fail = [&](const char* why) {
    const std::string w = what();
    return k.fail(TASKRING_KERNEL_ERR_DEADLINE, "domain '%s' rank %d: %s: %s", domain_name(c), c.rank, w.c_str(), why);
  };
  for (uint32_t i = 0; i < c.spin; ++i) {
    if (pred()) return true;
    Waiter::cpu_relax();
  }
  if (c.yield_ns != 0) {
    const Deadline polls = Deadline::after_ns(std::min(c.yield_ns, c.timeout_ns));
    do {
      if (pred()) return true;
      sched_yield();
    } while (!polls.expired() && h.abort.load(std::memory_order_relaxed) == 0);
  }
  const Deadline deadline = Deadline::after_ns(c.timeout_ns);
  while (true) {
    bell.parked.fetch_add(1, std::memory_order_seq_cst);
    const uint32_t seen = bell.epoch.load(std::memory_order_seq_cst);
    if (pred()) {
      bell.parked.fetch_sub(1, std::memory_order_relaxed);
      return true;
    }
    if (const uint32_t a = h.abort.load(std::memory_order_acquire); a != 0) {
      bell.parked.fetch_sub(1, std::memory_order_relaxed);
      if (a >= kAbortMismatch) {  // L4: another node allocated another domain under this name
        const std::string why = "aborted, MPI rank " + std::to_string(a - kAbortMismatch) +
                                " allocated a different domain under this name (members, ranks or window size differ)";
        return fail(why.c_str());
      }
      if (a >= 2) {  // a member on another node failed (L4 global domain)
        const std::string why = "aborted, a member on MPI rank " + std::to_string(a - 2) + " failed";
        return fail(why.c_str());
      }
      return fail("aborted, another member of the run failed");
    }
    const uint64_t left = deadline.remaining_ns();
    if (left == 0) {
      bell.parked.fetch_sub(1, std::memory_order_relaxed);
      const std::string why = "deadline of " + std::to_string(c.timeout_ns / 1000000) + " ms passed";
      return fail(why.c_str());
    }
    shared_futex_wait(&bell.epoch, seen, std::min(left, kParkSliceNs));
    bell.parked.fetch_sub(1, std::memory_order_relaxed);
  }
}

template <typename Pred, typename What>
bool wait_until(const KernelArgs& k, const CommContext& c, Pred&& pred, What&& what) {
  return wait_on(k, c, sync_of(c, c.rank).bell, pred, what);
}

std::string rank_list(const CommContext& c, const int* srcs, int n, uint32_t tok, bool barrier) {
  const SyncBlock& me = sync_of(c, c.rank);
  std::string s;
  int missing = 0;
  for (int i = 0; i < n; ++i) {
    const int q = srcs ? srcs[i] : i;
    if (q == c.rank) continue;
    // Off-node peers' sync blocks are local shadows: across nodes a barrier
    // reads the arrivals posted to this rank.
    const std::atomic<uint32_t>& word = !barrier         ? me.flags[q]
                                        : c.offnode != 0 ? me.barrier[q]
                                                         : sync_of(c, q).barrier_reached;
    const uint32_t v = word.load(std::memory_order_acquire);
    if (static_cast<int32_t>(v - tok) >= 0) continue;
    if (missing++ < 16) s += (s.empty() ? "" : ",") + std::to_string(q);
  }
  if (missing > 16) s += ",...";
  return std::to_string(missing) + " missing (ranks " + s + ")";
}

uint64_t mask_of(const CommContext& c, const int* srcs, int nsrcs) {
  uint64_t m = 0;
  if (srcs == nullptr) {
    for (int q = 0; q < c.nranks; ++q) m |= uint64_t{1} << q;
  } else {
    for (int i = 0; i < nsrcs; ++i)
      if (srcs[i] >= 0 && srcs[i] < c.nranks) m |= uint64_t{1} << srcs[i];
  }
  return m & ~(uint64_t{1} << c.rank);
}

// Tokens compare modulo 2^32 (as rank_list does): the sequence number wraps
// after 2^24 collectives (a direct allreduce takes one per segment), and a
// plain `<` would then take every peer's pre-wrap token for the new one.
bool flags_reached(const SyncBlock& s, uint64_t mask, uint32_t tok) {
  for (; mask != 0; mask &= mask - 1)
    if (static_cast<int32_t>(s.flags[__builtin_ctzll(mask)].load(std::memory_order_seq_cst) - tok) < 0) return false;
  return true;
}

}  // namespace

DomainLayout DomainLayout::make(int nranks, uint64_t window_size, uint64_t ring_bytes) {
  DomainLayout l;
  l.nranks = nranks;
  l.window_size = align_up(std::max<uint64_t>(window_size, 1), kPage);
  l.ring_bytes = align_up(ring_bytes, kPage);
  l.header_off = 0;
  l.contexts_off = align_up(sizeof(DomainHeader), 64);
  l.sync_off = align_up(l.contexts_off + kMaxRanks * sizeof(CommContext), kPage);
  l.windows_off = align_up(l.sync_off + static_cast<uint64_t>(nranks) * sizeof(SyncBlock), kPage);
  l.rings_off = l.windows_off + static_cast<uint64_t>(nranks) * l.window_size;
  l.total = l.rings_off + static_cast<uint64_t>(nranks) * l.ring_bytes;
  return l;
}

void fill_context(CommContext* ctx, char* base, const DomainLayout& layout, int rank, uint64_t timeout_ns) {
  std::memset(ctx, 0, sizeof(*ctx));
  ctx->magic = kContextMagic;
  ctx->rank = rank;
  ctx->nranks = layout.nranks;
  ctx->win_size = layout.window_size;
  ctx->timeout_ns = timeout_ns;
  ctx->spin = spin_budget(kSpinChecks, layout.nranks);
  ctx->yield_ns = ctx->spin == 0 ? kYieldPollNs : 0;
  ctx->header = reinterpret_cast<uintptr_t>(base + layout.header_off);
  for (int r = 0; r < layout.nranks; ++r) {
    ctx->windows[r] = reinterpret_cast<uintptr_t>(base + layout.window(r));
    ctx->sync[r] = reinterpret_cast<uintptr_t>(base + layout.sync(r));
  }
}

void ring(CommBell& bell) {
  bell.epoch.fetch_add(1, std::memory_order_seq_cst);
  if (bell.parked.load(std::memory_order_seq_cst) == 0) return;
  shared_futex_wake_all(&bell.epoch);
}

const char* domain_name(const CommContext& c) { return header_of(c).name; }

const CommContext* context_arg(const KernelArgs& k, int j) {
  const auto* c = reinterpret_cast<const CommContext*>(static_cast<uintptr_t>(k.scalar(j)));
  if (c == nullptr) {
    k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT,
           "scalar %d must be a CommContext (a domain member's device_ctx), got 0", j);
    return nullptr;
  }
  if (c->magic != kContextMagic || c->nranks < 1 || c->nranks > kMaxRanks || c->rank < 0 || c->rank >= c->nranks) {
    k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT,
           "scalar %d is not a CommContext of a live domain (magic %#x, rank %d of %d)", j, c->magic, c->rank,
           c->nranks);
    return nullptr;
  }
  return c;
}

void* peer_address(const CommContext& c, int peer, const void* local) {
  const auto a = reinterpret_cast<uintptr_t>(local);
  const uint64_t self = c.windows[c.rank];
  if (peer < 0 || peer >= c.nranks || a < self || a - self >= c.win_size) return nullptr;
  return reinterpret_cast<void*>(c.windows[peer] + (a - self));
}

bool check_peer(const KernelArgs& k, const CommContext& c, int peer) {
  if (peer >= 0 && peer < c.nranks) return true;
  return k.fail(TASKRING_KERNEL_ERR_OUT_OF_RANGE, "domain '%s': peer %d is not a rank in [0, %d)", domain_name(c), peer,
                c.nranks);
}

bool check_window_range(const KernelArgs& k, const CommContext& c, uint64_t off, uint64_t bytes, const char* what) {
  if (off <= c.win_size && bytes <= c.win_size - off) return true;
  return k.fail(TASKRING_KERNEL_ERR_OUT_OF_RANGE, "domain '%s': %s [%llu, +%llu) exceeds the %llu B window",
                domain_name(c), what, static_cast<unsigned long long>(off), static_cast<unsigned long long>(bytes),
                static_cast<unsigned long long>(c.win_size));
}

bool put(const KernelArgs& k, const CommContext& c, int peer, uint64_t dst_off, const void* src, uint64_t bytes) {
  if (!check_peer(k, c, peer) || !check_window_range(k, c, dst_off, bytes, "put")) return false;
  if (offnode(c, peer)) return remote_put(k, c, peer, dst_off, src, bytes);
  std::memcpy(window_of(c, peer) + dst_off, src, bytes);
  return true;
}

bool get(const KernelArgs& k, const CommContext& c, int peer, void* dst, uint64_t src_off, uint64_t bytes) {
  if (!check_peer(k, c, peer) || !check_window_range(k, c, src_off, bytes, "get")) return false;
  if (offnode(c, peer)) return remote_unsupported(k, c, peer, "get");
  std::memcpy(dst, window_of(c, peer) + src_off, bytes);
  return true;
}

bool put_tile(const KernelArgs& k, const CommContext& c, int peer, uint64_t dst_off, const tile::View2D& src) {
  const uint64_t row = static_cast<uint64_t>(src.cols) * src.elem_size();
  if (!check_peer(k, c, peer) || !check_window_range(k, c, dst_off, row * src.rows, "put_tile")) return false;
  if (offnode(c, peer)) return remote_put_tile(k, c, peer, dst_off, src);
  char* d = window_of(c, peer) + dst_off;
  for (int64_t r = 0; r < src.rows; ++r, d += row) {
    if (src.unit_col_stride()) {
      std::memcpy(d, src.at(r, 0), row);
    } else {
      for (int64_t j = 0; j < src.cols; ++j) std::memcpy(d + j * src.elem_size(), src.at(r, j), src.elem_size());
    }
  }
  return true;
}

bool get_tile(const KernelArgs& k, const CommContext& c, int peer, const tile::View2D& dst, uint64_t src_off) {
  const uint64_t row = static_cast<uint64_t>(dst.cols) * dst.elem_size();
  if (!check_peer(k, c, peer) || !check_window_range(k, c, src_off, row * dst.rows, "get_tile")) return false;
  if (offnode(c, peer)) return remote_unsupported(k, c, peer, "get_tile");
  const char* s = window_of(c, peer) + src_off;
  for (int64_t r = 0; r < dst.rows; ++r, s += row) {
    if (dst.unit_col_stride()) {
      std::memcpy(dst.at(r, 0), s, row);
    } else {
      for (int64_t j = 0; j < dst.cols; ++j) std::memcpy(dst.at(r, j), s + j * dst.elem_size(), dst.elem_size());
    }
  }
  return true;
}

namespace {
std::atomic<uint32_t>* signal_at(const KernelArgs& k, const CommContext& c, int peer, uint64_t off) {
  if (!check_peer(k, c, peer) || !check_window_range(k, c, off, 4, "signal")) return nullptr;
  if (off % 4 != 0) {
    k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "domain '%s': signal offset %llu is not 4-byte aligned",
           domain_name(c), static_cast<unsigned long long>(off));
    return nullptr;
  }
  return reinterpret_cast<std::atomic<uint32_t>*>(window_of(c, peer) + off);
}
}  // namespace

bool notify(const KernelArgs& k, const CommContext& c, int peer, uint64_t signal_off, NotifyOp op, uint32_t value) {
  std::atomic<uint32_t>* s = signal_at(k, c, peer, signal_off);
  if (s == nullptr) return false;
  if (offnode(c, peer)) return remote_notify(k, c, peer, signal_off, op, value);
  if (op == NotifyOp::kAdd) {
    s->fetch_add(value, std::memory_order_acq_rel);
  } else if (op == NotifyOp::kSet) {
    s->store(value, std::memory_order_release);
  } else {
    return k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "notify: op %u is not set (0) or add (1)",
                  static_cast<uint32_t>(op));
  }
  ring(sync_of(c, peer).bell);
  return true;
}

bool wait_signal(const KernelArgs& k, const CommContext& c, uint64_t signal_off, Cmp cmp, uint32_t value) {
  if (static_cast<uint32_t>(cmp) > 5)
    return k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "wait: comparison %u is not one of EQ NE GT GE LT LE (0..5)",
                  static_cast<uint32_t>(cmp));
  std::atomic<uint32_t>* s = signal_at(k, c, c.rank, signal_off);
  if (s == nullptr) return false;
  return wait_until(
      k, c, [&] { return compare(s->load(std::memory_order_acquire), cmp, value); },
      [&] {
        return "signal at window offset " + std::to_string(signal_off) + " is " +
               std::to_string(s->load(std::memory_order_acquire)) + ", waited for " + cmp_name(cmp) + " " +
               std::to_string(value);
      });
}

namespace {
// A domain spanning nodes: every rank posts epoch `e` to every other (local
// peers directly, off-node ones through the request ring), then waits for
// all of theirs on its own bell.
bool barrier_across_nodes(const KernelArgs& k, const CommContext& c, uint32_t e) {
  SyncBlock& me = sync_of(c, c.rank);
  for (int p = 0; p < c.nranks; ++p) {
    if (p == c.rank) continue;
    if (offnode(c, p)) {
      if (!remote_sync(k, c, p, RemoteOp::kBarrier, e)) return false;
      continue;
    }
    sync_of(c, p).barrier[c.rank].store(e, std::memory_order_release);
    ring(sync_of(c, p).bell);
  }
  return wait_until(
      k, c,
      [&] {
        for (int q = 0; q < c.nranks; ++q)
          if (q != c.rank && static_cast<int32_t>(me.barrier[q].load(std::memory_order_acquire) - e) < 0) return false;
        return true;
      },
      [&] { return "barrier " + std::to_string(e) + ": " + rank_list(c, nullptr, c.nranks, e, true); });
}
}  // namespace

bool barrier(const KernelArgs& k, const CommContext& c) {
  SyncBlock& me = sync_of(c, c.rank);
  DomainHeader& h = header_of(c);
  const uint32_t e = ++me.barrier_epoch;
  me.barrier_reached.store(e, std::memory_order_release);
  if (c.offnode != 0) return barrier_across_nodes(k, c, e);
  // Arrivals of barrier e are the counts ((e-1)·n, e·n]: the one that reaches
  // e·n is the last, and no rank can arrive for e+1 before e is published.
  const uint32_t target = e * static_cast<uint32_t>(c.nranks);
  // Before this rank arrives, the last complete barrier is exactly e-1 (this
  // rank passed it, and e cannot complete without this arrival), and the
  // arrivals counted so far are all of e-1's and some of e's: in
  // [(e-1)·n, e·n). Anything else means the header does not match the ranks'
  // epochs (a reused domain not reset), and waiting could pass without the
  // others. `done` is read before the arrival: after it, the last peer may
  // complete e at once.
  const uint32_t done = h.barrier_done.load(std::memory_order_acquire);
  const uint32_t prev = h.barrier_arrivals.fetch_add(1, std::memory_order_acq_rel);
  const uint32_t n = static_cast<uint32_t>(c.nranks);
  if (done != e - 1 || prev - (target - n) >= n) {
    // The run's failure aborts the domain, so the peers' waits end too.
    return k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT,
                  "domain '%s' rank %d: barrier %u found stale state (%u arrivals, %u done)", domain_name(c), c.rank, e,
                  prev, done);
  }
  if (prev + 1 == target) {
    h.barrier_done.store(e, std::memory_order_seq_cst);
    ring(h.bell);
    return true;
  }
  return wait_on(
      k, c, h.bell, [&] { return static_cast<int32_t>(h.barrier_done.load(std::memory_order_acquire) - e) >= 0; },
      [&] { return "barrier " + std::to_string(e) + ": " + rank_list(c, nullptr, c.nranks, e, true); });
}

uint32_t begin_collective(const CommContext& c) { return ++sync_of(c, c.rank).coll_seq; }

uint32_t begin_collective(const KernelArgs& k, const CommContext& c, uint64_t off, uint64_t stride) {
  SyncBlock& me = sync_of(c, c.rank);
  const bool same = off == me.scratch_off && stride == me.scratch_stride;
  const bool overlaps =
      me.scratch_stride != 0 && off < me.scratch_off + 2 * me.scratch_stride && me.scratch_off < off + 2 * stride;
  if (!same && overlaps && !barrier(k, c)) return 0;
  me.scratch_off = off;
  me.scratch_stride = stride;
  return begin_collective(c);
}

void post_flag(const CommContext& c, int peer, uint32_t tok) {
  if (offnode(c, peer)) return remote_post_flag(c, peer, tok);
  SyncBlock& s = sync_of(c, peer);
  s.flags[c.rank].store(tok, std::memory_order_seq_cst);
  // Dekker with wait_flags: it announces (want_tok, want_mask), then parked,
  // then re-checks the flags. A post that sees nobody parked is seen by that
  // re-check; otherwise the post last in the total order sees every flag and
  // rings once the announced set is complete.
  if (s.bell.parked.load(std::memory_order_seq_cst) == 0) return;
  const uint64_t mask = s.want_mask.load(std::memory_order_seq_cst);
  if (mask != 0 && !flags_reached(s, mask, s.want_tok.load(std::memory_order_seq_cst))) return;
  s.bell.epoch.fetch_add(1, std::memory_order_seq_cst);
  shared_futex_wake_all(&s.bell.epoch);
}

bool wait_flags(const KernelArgs& k, const CommContext& c, const int* srcs, int nsrcs, uint32_t tok, const char* what) {
  SyncBlock& me = sync_of(c, c.rank);
  const int n = srcs ? nsrcs : c.nranks;
  const uint64_t mask = mask_of(c, srcs, nsrcs);
  if (flags_reached(me, mask, tok)) return true;
  // Claim the announcement; if another wait holds it (not how collectives
  // run), this one parks unannounced and re-checks every park slice.
  // Tokens only grow, so a post reading the new mask with the previous
  // token evaluates a weaker condition: at worst an early (harmless) ring.
  uint64_t none = 0;
  const bool announced = me.want_mask.compare_exchange_strong(none, mask, std::memory_order_seq_cst);
  if (announced) me.want_tok.store(tok, std::memory_order_seq_cst);
  const bool ok = wait_until(
      k, c, [&] { return flags_reached(me, mask, tok); },
      [&] { return std::string(what) + ": " + rank_list(c, srcs, n, tok, false); });
  if (announced) me.want_mask.store(0, std::memory_order_seq_cst);
  return ok;
}

}  // namespace taskring::kernels::comm
