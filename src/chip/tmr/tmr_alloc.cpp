// The orchestrator's side of the rings: allocating a slot, heap bytes and
// dependency nodes, waiting (back-pressure) when they are full, and telling
// a structural deadlock from a slow drain.
#include <string>

#include "task_name.hpp"
#include "tmr_runtime.hpp"

namespace taskring::tmr {

std::string TmrRuntime::stall_diagnostics(TaskRing& ring) {
  uint64_t alive = ring.last_alive.load(std::memory_order_acquire);
  if (alive >= ring.next_seq) return "; ring empty";
  TaskSlot& s = ring.slot(alive);
  return "; oldest live " + tmr::task_name(s.id) +
         ": fanin_pending=" + std::to_string(s.fanin_pending.load(std::memory_order_acquire)) +
         " release_pending=" + std::to_string(s.release_pending.load(std::memory_order_acquire)) +
         " completed=" + std::to_string(s.completed.load(std::memory_order_acquire)) +
         " consumed=" + std::to_string(s.consumed.load(std::memory_order_acquire)) +
         " live=" + std::to_string(ring.next_seq - alive) +
         " pinned_by_open_scopes=" + std::to_string(ring.pinned_by_open_scopes);
}

bool TmrRuntime::wait_for_ring(TaskRing& ring, uint64_t observed_alive, const char* what, const char* knob) {
  // Returns as soon as the ring moved past what the caller saw when it found
  // no room (a retirement in between must not be waited for again).
  // Structural deadlocks are detected by the caller before it waits; this
  // is the wall-clock backstop for everything else.
  uint64_t alive = observed_alive;
  ++stats_.orch_blocked;
  uint64_t start = mono_ns();
  uint64_t last_alive = alive;
  uint64_t last_move = start;
  while (true) {
    if (is_fatal()) return false;
    if (config_.run_inline) {
      // Nobody else runs tasks: run one, or no task can ever retire.
      if (ring.last_alive.load(std::memory_order_acquire) != last_alive) return true;
      if (run_one_inline()) continue;
      report_fatal(PTO2_ERROR_FLOW_CONTROL_DEADLOCK,
                   std::string("ring ") + std::to_string(ring.index) + " " + what +
                       ": no task can retire (inline run, nothing ready) (window=" + std::to_string(ring.window) +
                       " heap=" + std::to_string(ring.heap.size) + " dep_pool=" + std::to_string(ring.dep_pool.size) +
                       "); raise " + knob + stall_diagnostics(ring));
      return false;
    }
    // A short spin: room often comes within a few task retirements.
    for (uint32_t i = 0; i < kRingSpins; ++i) {
      if (ring.last_alive.load(std::memory_order_acquire) != last_alive) return true;
      Waiter::cpu_relax();
    }
    // Then park until `wake_at` tasks have retired (TaskRing::wake_at): one
    // wake per batch of retirements, not one futex round trip per task.
    ring.wake_at.store(
        std::min(last_alive + std::max<uint64_t>(1, std::min(kWakeBatch, ring.window / 4)), ring.next_seq),
        std::memory_order_seq_cst);
    uint32_t epoch = ring_progress_.begin_park();
    // seq_cst: the other side of release()'s wake_at check.
    uint64_t now_alive = ring.last_alive.load(std::memory_order_seq_cst);
    if (now_alive != last_alive) {
      ring_progress_.cancel_park();
      ring.wake_at.store(kNoWaiter, std::memory_order_relaxed);
      return true;
    }
    uint64_t now = mono_ns();
    if (now - last_move > config_.stall_timeout_ms * 1000000ull) {
      ring_progress_.cancel_park();
      ring.wake_at.store(kNoWaiter, std::memory_order_relaxed);
      report_fatal(PTO2_ERROR_FLOW_CONTROL_DEADLOCK,
                   std::string("ring ") + std::to_string(ring.index) + " " + what + ": no task retired for " +
                       std::to_string(config_.stall_timeout_ms) + " ms (window=" + std::to_string(ring.window) +
                       " heap=" + std::to_string(ring.heap.size) + " dep_pool=" + std::to_string(ring.dep_pool.size) +
                       "); raise " + knob + " or TASKRING_STALL_TIMEOUT_MS" + stall_diagnostics(ring));
      return false;
    }
    ring_progress_.finish_park(epoch, 1'000'000);
    ring.wake_at.store(kNoWaiter, std::memory_order_relaxed);
  }
}

bool TmrRuntime::take_from(TaskRing& ring, BumpRing& pool, uint64_t need, uint64_t* off, int32_t code,
                           const char* what, const char* unit, const char* knob) {
  // Each pass snapshots last_alive *before* testing for room: the
  // structural check then reasons about a consistent set of live tasks, and
  // the wait returns at once if a task retired after the snapshot.
  // (The tiny-ring flake of issue 9 came from getting this wrong: a snapshot
  // taken after the failed try_alloc could be newer than the tail it saw, so
  // "every live task is pinned" held for the newer set while the pool already
  // had room -> a false DEP_POOL_OVERFLOW; and a wait that re-read the value
  // itself missed a retirement in between and waited for one that never came
  // -> a FLOW_CONTROL_DEADLOCK stall. TaskRing::advance's fence and
  // BumpRing::advance_tail's monotonic tail close the other two stalls.)
  while (true) {
    uint64_t alive = ring.last_alive.load(std::memory_order_acquire);
    if (pool.try_alloc(need, off)) return true;
    // Structural: every live task is pinned by an open scope, so the pool can
    // only be reclaimed after this (blocked) thread closes one.
    uint64_t live = ring.next_seq - alive;
    if (live > 0 && live <= ring.pinned_by_open_scopes) {
      report_fatal(code, "ring " + std::to_string(ring.index) + ": " + what + " full (" + std::to_string(pool.size) + " " +
                             unit + ", request " + std::to_string(need) + ") and the oldest live " +
                             tmr::task_name(ring.slot(alive).id) + " is pinned by an open scope, as is every live " +
                             "task; raise " + knob + " or close the scope");
      return false;
    }
    std::string waiting = std::string(what) + " full";
    if (!wait_for_ring(ring, alive, waiting.c_str(), knob)) return false;
  }
}

bool TmrRuntime::allocate(TaskRing& ring, uint64_t heap_bytes, uint64_t dep_nodes, const ArgLayout& args,
                          Allocation* out) {
  if (heap_bytes > ring.heap.size) {
    // Upstream reports this as a heap-ring deadlock (2): the request can
    // never fit, so the ring can never make room for it.
    report_fatal(PTO2_ERROR_HEAP_RING_DEADLOCK, "ring " + std::to_string(ring.index) + ": one task needs " +
                                                    std::to_string(heap_bytes) +
                                                    " heap bytes but the heap ring holds " +
                                                    std::to_string(ring.heap.size) + "; raise PTO2_RING_HEAP");
    return false;
  }
  if (dep_nodes > ring.dep_pool.size) {
    report_fatal(PTO2_ERROR_DEP_POOL_OVERFLOW, "ring " + std::to_string(ring.index) + ": one task needs " +
                                                   std::to_string(dep_nodes) +
                                                   " dependency entries but the pool holds " +
                                                   std::to_string(ring.dep_pool.size) + "; raise PTO2_RING_DEP_POOL");
    return false;
  }
  // Every task of an open scope stays live until the scope ends: a scope
  // with a full window of tasks can never make room for another.
  if (ring.pinned_by_open_scopes >= ring.window) {
    // Upstream's distinction: the innermost scope alone filling the window is
    // a scope deadlock (1); nested scopes that share the last ring filling it
    // together is a flow-control deadlock (3).
    const size_t own = scopes_.empty() ? 0 : scope_tasks_.size() - scopes_.back().first_task;
    report_fatal(own >= ring.window ? PTO2_ERROR_SCOPE_DEADLOCK : PTO2_ERROR_FLOW_CONTROL_DEADLOCK,
                 "ring " + std::to_string(ring.index) + ": open scopes hold " +
                     std::to_string(ring.pinned_by_open_scopes) + " live tasks and the task window is " +
                     std::to_string(ring.window) + "; raise PTO2_RING_TASK_WINDOW or split the scope");
    return false;
  }
  for (uint64_t alive = ring.last_alive.load(std::memory_order_acquire); ring.next_seq - alive >= ring.window;
       alive = ring.last_alive.load(std::memory_order_acquire)) {
    if (!wait_for_ring(ring, alive, "task window full", "PTO2_RING_TASK_WINDOW")) return false;
  }
  // A pool a task takes nothing from is skipped: try_alloc(0) always
  // succeeds and moves nothing (most tasks have no OUTPUT, many no producer).
  const uint64_t saved_heap_top = ring.heap.top, saved_pool_top = ring.dep_pool.top;
  *out = Allocation{};
  // try_alloc first, inline: take_from (a call) only when there is no room.
  if (heap_bytes != 0 && !ring.heap.try_alloc(heap_bytes, &out->heap_off) &&
      !take_from(ring, ring.heap, heap_bytes, &out->heap_off, PTO2_ERROR_HEAP_RING_DEADLOCK, "heap", "bytes",
                 "PTO2_RING_HEAP"))
    return false;
  if (dep_nodes != 0 && !ring.dep_pool.try_alloc(dep_nodes, &out->pool_off) &&
      !take_from(ring, ring.dep_pool, dep_nodes, &out->pool_off, PTO2_ERROR_DEP_POOL_OVERFLOW, "dependency pool",
                 "entries", "PTO2_RING_DEP_POOL")) {
    ring.heap.top = saved_heap_top;
    return false;
  }
  // Arguments: the hot pool if they fit there now, else the cold pool, which
  // holds (window + 1) x the largest task, so with the window checked above
  // it always has room; a wait there would be a sizing bug, reported as a
  // flow-control deadlock naming the window.
  ChipTensor* units = nullptr;
  if (const uint64_t need = args.units(); need != 0) {
    uint64_t off = 0;
    if (ring.hot_args.try_alloc(need, &off)) {
      units = ring.hot_arg_units + off;
    } else if (take_from(ring, ring.args, need, &off, PTO2_ERROR_FLOW_CONTROL_DEADLOCK, "argument pool", "units",
                         "PTO2_RING_TASK_WINDOW")) {
      units = ring.arg_units + off;
    } else {
      ring.heap.top = saved_heap_top;
      ring.dep_pool.top = saved_pool_top;
      return false;
    }
  }
  uint64_t seq = ring.next_seq++;
  TaskSlot* t = &ring.slot(seq);
  t->seq = seq;
  t->id = PTO2TaskId::make(static_cast<uint32_t>(ring.index), static_cast<uint32_t>(seq));
  t->ring = static_cast<uint8_t>(ring.index);
  t->heap_end = ring.heap.top;
  t->dep_mark = ring.dep_pool.top;
  t->hot_arg_mark = ring.hot_args.top;
  t->arg_mark = ring.args.top;
  t->fanout_closed = false;
  t->completed.store(false, std::memory_order_relaxed);
  t->consumed.store(false, std::memory_order_relaxed);
  t->fanout_head = nullptr;
  t->retained_count = 0;
  t->next_block.store(0, std::memory_order_relaxed);
  t->blocks_done.store(0, std::memory_order_relaxed);
  // Guard + scope reference + own completion.
  t->fanin_pending.store(1, std::memory_order_relaxed);
  t->release_pending.store(2, std::memory_order_relaxed);
  t->tensors = units;
  t->scalars = reinterpret_cast<uint64_t*>(units + args.tensors);
  t->retained = reinterpret_cast<TaskSlot**>(units + args.tensors + args.scalar_units);
  ring.published_seq.store(ring.next_seq, std::memory_order_release);
  out->slot = t;
  return true;
}

}  // namespace taskring::tmr
