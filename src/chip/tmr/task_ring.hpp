// One ring level: a window of task slots, a heap for runtime-allocated
// outputs, a pool of dependency nodes and a pool of task arguments, all
// reclaimed in submission order.
//
// The orchestrator owns the heads (next_seq, heap and pool tops); executors
// own the tail: whoever makes the oldest live task CONSUMED advances
// `last_alive` over every consecutive consumed slot and publishes the heap and
// pool tails with it. Heap and pool use monotonic byte/node counters, so
// "used = top - tail" holds across wrap-around and a request never straddles
// the end (the gap is skipped and counted as used).
#pragma once

#include <atomic>
#include <cstdint>

#include "task_state.hpp"
#include "taskring/device/device.hpp"

namespace taskring::tmr {

// Moves a BumpRing's tail forward to `t`; never back (see try_alloc's
// rebase). Called by the ring's advancer only, under its lock, so a plain
// store: the one other writer, try_alloc_wrapping's rebase, moves a tail
// only when it equals the top, past every end a live task still carries.
inline void advance_tail(std::atomic<uint64_t>& tail, uint64_t t) {
  uint64_t cur = tail.load(std::memory_order_relaxed);
  if (cur < t) tail.store(t, std::memory_order_release);
}

// Monotonic-counter ring allocator for `size` units (set_size). Its tail
// is its own unless bind_tail() puts it elsewhere: a TaskRing keeps every
// pool's tail on the retirement side's cache line, away from the tops the
// orchestrator writes on every submit.
struct BumpRing {
  uint64_t size = 0;
  uint64_t mask = 0;  // size - 1 when size is a power of two, else 0
  uint64_t top = 0;   // orchestrator only
  std::atomic<uint64_t> own_tail{0};
  std::atomic<uint64_t>& tail = own_tail;  // advanced by retirement

  BumpRing() = default;
  explicit BumpRing(std::atomic<uint64_t>& bound_tail) : tail(bound_tail) {}
  BumpRing(const BumpRing&) = delete;
  BumpRing& operator=(const BumpRing&) = delete;

  // Offset of `need` contiguous units, or false when they do not fit now.
  // On success `top` moves past the allocation (and any skipped end gap).
  bool try_alloc(uint64_t need, uint64_t* offset) {
    // The common case first: no wrap, room behind the tail (what the full
    // rule below decides for it too, in a third of the instructions).
    const uint64_t pos = pos_of(top);
    if (pos + need <= size && top + need - tail.load(std::memory_order_acquire) <= size) {
      *offset = pos;
      top += need;
      return true;
    }
    return try_alloc_wrapping(need, offset);
  }
  // try_alloc's full rule: skips the end gap, rebases an empty ring.
  bool try_alloc_wrapping(uint64_t need, uint64_t* offset) {
    uint64_t t = tail.load(std::memory_order_acquire);
    if (t == top && pos_of(top) != 0 && pos_of(top) + need > size) {
      // Empty ring parked mid-buffer: restart at the next lap so a request
      // up to the full size fits. Tasks still live here allocated nothing
      // (top == tail), so their retirement carries the old, smaller tail,
      // which advance_tail ignores.
      uint64_t lap = (top / size + 1) * size;
      if (tail.compare_exchange_strong(t, lap, std::memory_order_acq_rel)) top = lap;
    }
    uint64_t pos = pos_of(top);
    uint64_t skip = pos + need > size ? size - pos : 0;
    if (top + skip + need - tail.load(std::memory_order_acquire) > size) return false;
    top += skip;
    *offset = pos_of(top);
    top += need;
    return true;
  }
  void advance_tail(uint64_t t) { tmr::advance_tail(tail, t); }
  // `x % size` without a division when size is a power of two (the
  // default rings): try_alloc runs on every submit.
  uint64_t pos_of(uint64_t x) const { return mask != 0 ? x & mask : x % size; }
  void set_size(uint64_t units) {
    size = units;
    mask = units > 1 && (units & (units - 1)) == 0 ? units - 1 : 0;
  }
  void reset() {
    top = 0;
    tail.store(0, std::memory_order_relaxed);
  }
};

// TaskRing::wake_at when the orchestrator is not waiting for the ring.
inline constexpr uint64_t kNoWaiter = UINT64_MAX;
// Retirements that wake an orchestrator waiting for room (at most a quarter
// of the window), and polls it spends before it parks.
inline constexpr uint64_t kWakeBatch = 64;
inline constexpr uint32_t kRingSpins = 256;

struct TaskRing {
  int index = 0;
  uint64_t window = 0;  // power of two
  TaskSlot* slots = nullptr;
  DepNode* dep_nodes = nullptr;
  // Task arguments (ArgLayout units), dense in submission order so that
  // consecutive tasks share lines and pages, in two pools. A task takes its
  // units from the small hot pool when they fit there now (never waiting for
  // it), else from the cold pool, sized (window + 1) x ArgLayout::kMaxUnits
  // so that it never runs out before the window does: neither has a knob or
  // a deadlock of its own. While a ring's live arguments fit the hot pool
  // (kHotArgUnits), they cycle through its 1 MiB and stay in cache; the cold
  // pool alone would stream through 80 MiB per window.
  static constexpr uint64_t kHotArgUnits = 8192;
  ChipTensor* hot_arg_units = nullptr;
  ChipTensor* arg_units = nullptr;
  DeviceAddr heap_base = 0;

  // Three groups of fields by who writes them, each on lines of its own.
  // Mixed on shared lines, each submit's tops and each retirement's tails
  // took turns at them: with two pools more (the argument pools) the
  // threaded chain, fan-out and independent runs cost 16-30 % more
  // (docs/benchmarks.md#l2-hot-path).
  //
  // The orchestrator's, written on every submit; executors read only
  // published_seq (and never the pools' tops).
  alignas(64) uint64_t next_seq = 0;       // orchestrator only
  std::atomic<uint64_t> published_seq{0};  // next_seq as executors see it
  uint64_t pinned_by_open_scopes = 0;      // orchestrator only
  // Retirement's, written by whichever executor advances the ring; the
  // orchestrator reads them for room.
  alignas(64) std::atomic<uint64_t> last_alive{0};
  std::atomic<bool> advance_lock{false};
  std::atomic<uint64_t> heap_tail{0}, pool_tail{0}, hot_arg_tail{0}, arg_tail{0};
  // The orchestrator, parked for room, asks to be woken once last_alive
  // reaches this (kNoWaiter: nobody waits, retirements notify nobody).
  alignas(64) std::atomic<uint64_t> wake_at{kNoWaiter};
  // The pools: sizes and tops (the orchestrator's), tails bound above.
  alignas(64) BumpRing heap{heap_tail};         // bytes
  BumpRing dep_pool{pool_tail};                 // nodes
  BumpRing hot_args{hot_arg_tail};              // ArgLayout units of hot_arg_units
  BumpRing args{arg_tail};                      // ArgLayout units of arg_units

  TaskSlot& slot(uint64_t seq) { return slots[seq & (window - 1)]; }

  // Advances last_alive over consecutive consumed slots. Returns true if it
  // moved. Safe to call from any thread. (Inline: every retirement runs it.)
  inline bool advance();
  // Moves last_alive and the tails over the consumed slots from last_alive
  // on; true if any. The caller excludes other advancers: advance() by its
  // lock, a run whose tasks all live on one thread (tasks_here_) by having
  // no other advancer, so it calls this directly (no lock, no fence).
  inline bool advance_consumed();

  void reset_counters() {
    next_seq = 0;
    published_seq.store(0, std::memory_order_relaxed);
    last_alive.store(0, std::memory_order_relaxed);
    wake_at.store(kNoWaiter, std::memory_order_relaxed);
    heap.reset();
    dep_pool.reset();
    hot_args.reset();
    args.reset();
    pinned_by_open_scopes = 0;
  }
};

inline bool TaskRing::advance_consumed() {
  uint64_t alive = last_alive.load(std::memory_order_relaxed);
  const uint64_t end = published_seq.load(std::memory_order_acquire);
  if (!(alive < end && slot(alive).consumed.load(std::memory_order_acquire))) return false;
  uint64_t heap_to = 0, pool_to = 0, hot_to = 0, arg_to = 0;
  do {
    TaskSlot& s = slot(alive);
    heap_to = s.heap_end;
    pool_to = s.dep_mark;
    hot_to = s.hot_arg_mark;
    arg_to = s.arg_mark;
    ++alive;
  } while (alive < end && slot(alive).consumed.load(std::memory_order_acquire));
  // The tails themselves, not through the pools (whose line the
  // orchestrator writes on every submit).
  advance_tail(heap_tail, heap_to);
  advance_tail(pool_tail, pool_to);
  advance_tail(hot_arg_tail, hot_to);
  advance_tail(arg_tail, arg_to);
  last_alive.store(alive, std::memory_order_release);
  return true;
}

inline bool TaskRing::advance() {
  bool moved = false;
  while (true) {
    if (advance_lock.exchange(true, std::memory_order_seq_cst)) return moved;
    if (advance_consumed()) moved = true;
    const uint64_t alive = last_alive.load(std::memory_order_relaxed);
    advance_lock.store(false, std::memory_order_release);
    // A slot consumed while we held the lock would otherwise wait for the
    // next retirement; re-check once we have released it. The fence keeps the
    // re-check from being ordered before the unlock (Dekker with the thread
    // that set `consumed` and then found the lock taken): without it both
    // can miss, and the ring stalls with its oldest task consumed.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const uint64_t end = published_seq.load(std::memory_order_acquire);
    if (!(alive < end && slot(alive).consumed.load(std::memory_order_acquire))) return moved;
  }
}

}  // namespace taskring::tmr
