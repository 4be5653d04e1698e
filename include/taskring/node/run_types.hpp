// The run surface that the L3 node (NodeWorker) and L4 (NetWorker) share:
// a run's orchestration function, its completion handle and its counts.
//
// Run summaries above the chip, each with its own job (one of each):
//   RunCounts      (here)               how a run's tasks ended: what a caller of
//                                        RunHandle reads once the run finished.
//   ChipRunTotals  (chip_run_totals.hpp) what one chip child's L2 runs added up
//                                        to across node runs (copies, Graph
//                                        records, host times): for reports.
//   RunState       (src/node/dag, private) the engine's live record of the run in
//                                        flight, not a summary: a RunHandle
//                                        shares it and reads its final Status
//                                        and RunCounts once it is done.
// The chip level's own summaries (RunReport, RunStats) live in the chip layer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "taskring/base/clock.hpp"
#include "taskring/base/status.hpp"

namespace taskring::net {
class NetWorker;  // L4 hands out RunHandles of its own engine
}

namespace taskring::node {

class Orchestrator;
class NodeWorker;
struct RunState;

// What a run executes on the calling thread: it submits the run's tasks.
using OrchFunction = std::function<Status(Orchestrator&)>;

// How the caller of submit() will wait for the run (NodeWorker, NetWorker).
struct SubmitOptions {
  // The caller waits for the returned handle at once, as run() does: the
  // run stays with the waiting thread (it drives the engine) instead of
  // being handed to the engine's scheduler thread in between, which costs a
  // wake of that thread per run. A handle submitted so and then not waited
  // on still finishes, but a completion its orchestration did not see waits
  // for the scheduler thread's next look (at most 50 ms).
  bool caller_waits = false;
};

// Counts of one run's tasks (a group counts once).
struct RunCounts {
  uint64_t submitted = 0;
  uint64_t completed = 0;  // finished OK
  uint64_t failed = 0;     // ran and failed, or failed at dispatch (dead child)
  uint64_t skipped = 0;    // never started: poisoned by a failed producer or cancelled
};

// The completion of one run. Copyable; every copy and every waiter sees the
// same Status.
class RunHandle {
 public:
  RunHandle() = default;
  // Waits for the run until `deadline`: the run's Status, or
  // DEADLINE_EXCEEDED (the run goes on; wait again). An empty handle is
  // FAILED_PRECONDITION.
  Status wait(Deadline deadline = Deadline::after_ms(600000)) const;
  bool done() const;
  // The run's counts once it is done; all zero before.
  RunCounts counts() const;

 private:
  friend class NodeWorker;
  friend class net::NetWorker;
  explicit RunHandle(std::shared_ptr<RunState> run) : run_(std::move(run)) {}
  std::shared_ptr<RunState> run_;
};

}  // namespace taskring::node
