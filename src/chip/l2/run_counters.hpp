// The counters every run reports (RunStats): tasks completed, kernel calls,
// and the first/last scheduling timestamps. Written by executors (relaxed:
// they are statistics), read after the run. Its job, apart from RunStats:
// the concurrent, cache-line-laid-out live form, which never leaves the
// runtime (run_stats.hpp lists the chip's run summaries).
//
// Layout is part of the hot path: kernel calls are counted per executor, each
// on its own cache line (a shared counter bumped by every kernel call of
// every executor moved one line between cores per task); `first_ns`, read by
// every execution, sits apart from `completed`/`last_ns`, which every
// completion writes.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "taskring/base/clock.hpp"
#include "taskring/chip/run_stats.hpp"

namespace taskring::l2 {

struct RunCounters {
  struct alignas(64) Lane {
    std::atomic<uint64_t> kernel_calls{0};
  };

  alignas(64) std::atomic<uint64_t> completed{0};
  std::atomic<uint64_t> last_ns{0};
  alignas(64) std::atomic<uint64_t> first_ns{0};
  std::unique_ptr<Lane[]> lanes;  // one per executor, and one for the orchestrator's help
  int lane_count = 0;

  // Sizes the lanes for `n` executors and the orchestrator that helps them
  // (lane n); before the executors start.
  void set_executors(int n) {
    lane_count = n + 1;
    lanes = std::make_unique<Lane[]>(static_cast<size_t>(lane_count));
  }
  // Lane `e`'s kernel-call counter. One thread at a time writes a lane (its
  // executor, or the orchestrator helping: LocalReady::lane), so a kernel
  // call counts with a load and a store, not a locked add.
  std::atomic<uint64_t>& kernel_calls_of(int e) { return lanes[e].kernel_calls; }

  void reset() {
    completed.store(0, std::memory_order_relaxed);
    for (int e = 0; e < lane_count; ++e) lanes[e].kernel_calls.store(0, std::memory_order_relaxed);
    first_ns.store(0, std::memory_order_relaxed);
    last_ns.store(0, std::memory_order_relaxed);
  }
  // The first execution of the run stamps first_ns.
  void mark_scheduled() {
    if (first_ns.load(std::memory_order_relaxed) != 0) return;
    uint64_t zero = 0;
    first_ns.compare_exchange_strong(zero, mono_ns(), std::memory_order_relaxed);
  }
  // Counts `n` completed tasks; returns the count including them. Executors
  // call it once per batch (l2/local_ready.hpp), so the clock read that
  // stamps `last_ns` is paid per batch too: the last batch of a run is
  // published as soon as its executor finds nothing left to run.
  uint64_t add_completed(uint64_t n) {
    last_ns.store(mono_ns(), std::memory_order_relaxed);
    return completed.fetch_add(n, std::memory_order_acq_rel) + n;
  }
  // `base` with the executor-side fields filled in.
  RunStats fill(RunStats base) const {
    base.tasks_completed = completed.load(std::memory_order_acquire);
    uint64_t calls = 0;
    for (int e = 0; e < lane_count; ++e) calls += lanes[e].kernel_calls.load(std::memory_order_acquire);
    base.kernel_calls = calls;
    base.sched_start_ns = first_ns.load(std::memory_order_acquire);
    base.sched_end_ns = last_ns.load(std::memory_order_acquire);
    return base;
  }
};

}  // namespace taskring::l2
