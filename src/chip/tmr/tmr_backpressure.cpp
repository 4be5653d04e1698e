// Back-pressure, the orchestrator's slow path: when a ring has no room for a
// submit (allocate(), tmr_submit.cpp), waiting for retirements, and telling a
// structural deadlock from a slow drain.
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
  NotFeeding waiting(orch_feeding_);
  uint64_t start = mono_ns();
  uint64_t last_alive = alive;
  uint64_t last_move = start;
  while (true) {
    if (is_fatal()) return false;
    if (tasks_here_) {
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
    gate_.wake_if_deferred();  // an orchestrating caller's first task (RunRequest::orchestrate_here)
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

}  // namespace taskring::tmr
