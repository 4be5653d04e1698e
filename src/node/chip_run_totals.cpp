#include "taskring/node/chip_run_totals.hpp"

#include <algorithm>

namespace taskring::node {

namespace {
uint64_t window(uint64_t a, uint64_t b) { return b > a ? b - a : 0; }
}  // namespace

void ChipRunTotals::add(const RunReport& r) {
  const GraphRunStats& g = r.graph;
  runs += 1;
  skipped_device_runs += r.skipped_device_run ? 1 : 0;
  tasks_submitted += r.stats.tasks_submitted;
  tasks_completed += r.stats.tasks_completed;
  kernel_tasks += r.stats.kernel_tasks;
  // A GRAPH task is executed as its Definition's nodes.
  const uint64_t done = r.stats.tasks_completed + g.graph_nodes_run;
  tasks_executed += r.skipped_device_run ? 0 : done - std::min(done, g.graph_tasks);
  host_tasks += g.host_tasks;
  graph_tasks += g.graph_tasks;
  graph_nodes_run += g.graph_nodes_run;
  definitions_recorded += g.definitions_recorded;
  nodes_recorded += g.nodes_recorded;
  h2d_calls += r.h2d_calls;
  h2d_bytes += r.h2d_bytes;
  runtime_h2d_calls += g.graph_upload_calls + g.arena_h2d_calls + g.image_h2d_calls;
  runtime_h2d_bytes += g.graph_upload_bytes + g.arena_h2d_bytes + g.image_h2d_bytes;
  submission_h2d_calls += g.arena_h2d_calls;
  upload_ns += g.graph_upload_ns + g.arena_h2d_ns + g.image_h2d_ns;
  d2h_calls += r.d2h_calls;
  d2h_bytes += r.d2h_bytes;
  bind_ns += r.bind_ns;
  orch_ns += window(r.stats.orch_start_ns, r.stats.orch_end_ns);
  if (r.stats.sched_start_ns != 0) device_ns += window(r.stats.sched_start_ns, r.stats.sched_end_ns);
  run_ns += r.run_ns;
}

void ChipRunTotals::add(const ChipRunTotals& o) {
  runs += o.runs;
  skipped_device_runs += o.skipped_device_runs;
  tasks_submitted += o.tasks_submitted;
  tasks_completed += o.tasks_completed;
  kernel_tasks += o.kernel_tasks;
  tasks_executed += o.tasks_executed;
  host_tasks += o.host_tasks;
  graph_tasks += o.graph_tasks;
  graph_nodes_run += o.graph_nodes_run;
  definitions_recorded += o.definitions_recorded;
  nodes_recorded += o.nodes_recorded;
  h2d_calls += o.h2d_calls;
  h2d_bytes += o.h2d_bytes;
  runtime_h2d_calls += o.runtime_h2d_calls;
  runtime_h2d_bytes += o.runtime_h2d_bytes;
  submission_h2d_calls += o.submission_h2d_calls;
  upload_ns += o.upload_ns;
  d2h_calls += o.d2h_calls;
  d2h_bytes += o.d2h_bytes;
  bind_ns += o.bind_ns;
  orch_ns += o.orch_ns;
  device_ns += o.device_ns;
  run_ns += o.run_ns;
  dispatches += o.dispatches;
}

}  // namespace taskring::node
