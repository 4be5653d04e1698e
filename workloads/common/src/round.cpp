#include "taskring/workloads/round.hpp"

#include <chrono>
#include <string>

namespace taskring::workloads {

Expected<RoundResult> run_round(ChipWorker& worker, int callable_id, Workload& w, const RunConfig& config) {
  const std::string ctx = std::string(w.name()) + " run";
  ChipTaskArgs args;
  Status bound = w.bind_args(args);
  if (!bound.ok()) return bound.with_context(ctx);
  const auto t0 = std::chrono::steady_clock::now();
  Expected<RunReport> report = worker.run(callable_id, args, config);
  const auto t1 = std::chrono::steady_clock::now();
  if (!report.ok()) return report.status().with_context(ctx);
  RoundResult r;
  r.report = *report;
  r.host_run_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
  r.golden = w.check(&r.stats);
  return r;
}

}  // namespace taskring::workloads
