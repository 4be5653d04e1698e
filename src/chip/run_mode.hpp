// How a chip runs a callable when TASKRING_RUN_INLINE is unset: it times
// both ways and keeps the faster.
//
// Threaded (an orchestrator thread and executor threads) wins when kernels
// are heavy enough that running them beside the orchestration pays for the
// hand-offs between threads; inline (the calling thread orchestrates and runs
// every task) wins when they are not: on the 2-vCPU machine inline ran empty
// tasks 1.2-2x faster on all four overhead patterns, and threaded ran DSV4's
// decode 1.35x faster (docs/benchmarks.md). Which side of that line a
// callable falls on depends on its kernels and on the machine, so the chip
// measures it instead of guessing: a callable's first two runs warm each way
// up (threaded, then inline: each way's first run pays page faults and cold
// caches the other did not, 1.5-2x on a run of 100k empty tasks), the next
// two time them (threaded, inline), and inline is kept unless threaded took
// under kThreadedMargin of its time. The margin is wide on purpose: an
// inline run is still warming in its second run (chain 156 -> 118 -> 101 ns
// over its first three on the 2-vCPU machine), and a threaded run lands in a
// fast mode now and then (103 ns against 210 in the runs after it, when its
// two threads happen to share a CPU), so one threaded probe must win
// clearly. A callable 1.35x faster threaded (DSV4's decode, stop 22)
// would still pick threaded.
// Then every kReprobeEvery-th run
// tries the other way once and switches when it took under kSwitchMargin of
// the kept way's latest run.
//
// A callable whose kernels ever waited on a sibling outside a co-resident
// group (exec::kernel_waits) stays threaded: inline, that sibling would never
// run beside it. Only ns per completed task is compared, so runs of one
// callable with different sizes still compare fairly.
#pragma once

#include <cstdint>
#include <vector>

namespace taskring {

class RunModePicker {
 public:
  static constexpr int kWarmupRuns = 2;       // threaded, inline: not evidence
  static constexpr int kProbeRuns = 4;        // then threaded, inline, timed
  static constexpr int kReprobeEvery = 64;    // runs between two tries of the other way
  static constexpr double kThreadedMargin = 0.8;  // threaded must take < 80 % of inline's probe
  static constexpr double kSwitchMargin = 0.9;    // a re-probe must take < 90 % of the kept way's run

  // Whether callable `id`'s next run goes inline.
  bool next_inline(int id);
  // The outcome of that run: its mode, wall time and completed tasks; `ok`
  // false (a failed run), no task or `waited` (a kernel waited on a sibling)
  // keep it from counting, and `waited` pins the callable threaded.
  void record(int id, bool ran_inline, uint64_t run_ns, uint64_t tasks, bool ok, bool waited);

 private:
  struct State {
    int runs = 0;             // recorded runs
    bool pinned_threaded = false;
    bool chose_inline = false;  // after the probes
    double best_ns[2] = {0, 0};  // per task, by mode (0: threaded, 1: inline); 0 = none yet
    double last_ns[2] = {0, 0};  // the latest run of each mode
    bool probing_other = false;  // the run in flight is a re-probe
  };
  State& of(int id);
  std::vector<State> states_;
};

}  // namespace taskring
