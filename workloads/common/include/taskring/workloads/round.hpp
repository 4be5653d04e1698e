// One checked round of a workload on a ChipWorker.
#pragma once

#include <cstdint>

#include "taskring/base/expected.hpp"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/workloads/workload.hpp"

namespace taskring::workloads {

struct RoundResult {
  RunReport report;          // the worker's finalize report
  uint64_t host_run_ns = 0;  // wall time of ChipWorker::run (prepare..finalize)
  Status golden;             // Workload::check() of this round
  GoldenStats stats;
};

// bind_args, ChipWorker::run (timed), check. The returned error is the run's
// own failure (bad arguments, kernel error, deadlock...), with context
// "<workload> run"; a golden mismatch is a successful round whose `golden` is
// not OK. Precondition: w.setup() succeeded and `callable_id` is
// w.callable() registered on `worker`.
Expected<RoundResult> run_round(ChipWorker& worker, int callable_id, Workload& w, const RunConfig& config = {});

}  // namespace taskring::workloads
