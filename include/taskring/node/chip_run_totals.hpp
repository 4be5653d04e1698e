// ChipRunTotals: what the chip runs of one child added up to, for reports
// of a node round (host-submitted tasks, Graph records, copies, host times).
//
// A chip child adds the RunReport of every chip run it finishes to its
// totals; NodeWorker::take_chip_run_totals() reads and clears them between
// runs. Times are sums of per-run durations, not windows.
#pragma once

#include <cstdint>

#include "taskring/chip/chip_worker.hpp"

namespace taskring::node {

struct ChipRunTotals {
  uint64_t runs = 0;                 // chip runs finished OK
  uint64_t skipped_device_runs = 0;  // of which ran under TASKRING_SKIP_DEVICE_RUN
  uint64_t tasks_submitted = 0;      // RunStats::tasks_submitted (hbg: the task image, a GRAPH task once)
  uint64_t tasks_completed = 0;
  uint64_t kernel_tasks = 0;    // RunStats::kernel_tasks (hbg: outside Graphs)
  uint64_t tasks_executed = 0;  // tasks the device ran, a GRAPH task counted as its nodes (0 when skipped)
  uint64_t host_tasks = 0;      // hbg: entries in the task image
  uint64_t graph_tasks = 0;     // hbg: outer GRAPH tasks
  uint64_t graph_nodes_run = 0;
  uint64_t definitions_recorded = 0;
  uint64_t nodes_recorded = 0;
  uint64_t h2d_calls = 0, h2d_bytes = 0;  // every copy to the device (staging + runtime)
  uint64_t runtime_h2d_calls = 0,
           runtime_h2d_bytes = 0;     // of which the runtime's: Definitions, submission images, task image
  uint64_t submission_h2d_calls = 0;  // of which Graph submission images (bulk arena: 1 per run; per layer without it)
  uint64_t upload_ns = 0;             // hbg: Definition + submission image + task image uploads
  uint64_t d2h_calls = 0, d2h_bytes = 0;
  uint64_t bind_ns = 0;    // ChipWorker prepare (staging)
  uint64_t orch_ns = 0;    // orchestration window (hbg: the host phase)
  uint64_t device_ns = 0;  // scheduler window: first dispatch .. last completion
  uint64_t run_ns = 0;     // launch .. done
  // Batches of tasks the node handed this chip: one mailbox publish and at
  // most one wake each, however many tasks (docs/node.md "Dispatch").
  uint64_t dispatches = 0;

  // Adds one finished run.
  void add(const RunReport& r);
  // Adds another child's totals.
  void add(const ChipRunTotals& o);
};

}  // namespace taskring::node
