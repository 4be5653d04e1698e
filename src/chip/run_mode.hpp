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
// measures it instead of guessing.
//
// The schedule of a callable's runs:
//   run 0            threaded, a warm-up that is not evidence. It goes first
//                    because it is the way every kernel can run: one that
//                    waits on a sibling (exec::kernel_waits) is seen here
//                    and pins the callable threaded before any inline run.
//   run 1            inline, a warm-up: the first run after a threaded one
//                    pays for moving the rings' cache lines back (chain 178
//                    against 95 ns per task on the 2-vCPU machine).
//   runs 2 ... 7     inline.
//   run kProbeRun    threaded, timed against the inline run just before it;
//                    inline is kept unless threaded took under
//                    kThreadedMargin of its time.
// The probe waits because it costs its own run and the slow inline run after
// it: a callable that runs a handful of times keeps that cost, and one that
// runs again and again pays it once. What waiting costs is bounded by the
// first kProbeRun runs: DSV4's decode, 1.35x faster threaded, runs 1-7 at
// inline's speed. (A rule by weight, probing at once when run 2 took long
// per task, misread short runs: ten tasks with a 30 us run cost look like
// 3 us tasks.)
// Then every kReprobeEvery-th run tries the other way once and switches when
// it took under kSwitchMargin of the kept way's latest run.
//
// The margins are wide on purpose: threaded runs here land in a fast mode
// now and then (chain 103 ns against 210 in the runs after it, when its two
// threads happen to share a CPU), so one threaded probe must win clearly. A
// callable 1.35x faster threaded (DSV4's decode, stop 22) still picks
// threaded. Only ns per completed task is compared, so runs of one callable
// with different sizes still compare fairly.
#pragma once

#include <cstdint>
#include <vector>

namespace taskring {

class RunModePicker {
 public:
  static constexpr int kProbeRun = 8;             // the first threaded probe
  static constexpr int kReprobeEvery = 64;        // runs between two tries of the other way
  static constexpr double kThreadedMargin = 0.8;  // threaded must take < 80 % of inline's run
  static constexpr double kSwitchMargin = 0.9;    // a re-probe must take < 90 % of the kept way's run

  // Whether callable `id`'s next run goes inline.
  bool next_inline(int id);
  // Whether the time of callable `id`'s next run can change a decision: the
  // run before a probe and the probe itself (a caller that times only those
  // passes tasks = 0 to record() for the others, which then do not count).
  bool needs_time(int id);
  // The outcome of that run: its mode, wall time and completed tasks; `ok`
  // false (a failed run) or no task keep it from counting (a way with no
  // counted run before the decision loses it), and `waited` (a kernel waited
  // on a sibling) pins the callable threaded.
  void record(int id, bool ran_inline, uint64_t run_ns, uint64_t tasks, bool ok, bool waited);

 private:
  struct State {
    int runs = 0;  // recorded runs
    bool pinned_threaded = false;
    bool decided = false;            // the first probe has been judged
    int decided_at = 0;              // runs recorded when it was
    bool chose_inline = true;
    double last_ns[2] = {0, 0};  // per task, the latest counted run of each mode (0: threaded, 1: inline)
    bool probing_other = false;  // the run in flight is a re-probe
  };
  State& of(int id);
  std::vector<State> states_;
};

}  // namespace taskring
