// Views of an analysed trace: text tables, Chrome trace-event JSON, the
// machine-readable report, and the verdict that becomes the exit status.
#pragma once

#include <string>
#include <vector>

#include "taskring/base/status.hpp"
#include "taskring/trace/invocations.hpp"
#include "taskring/trace/matrix.hpp"
#include "taskring/trace/span.hpp"

namespace taskring::trace {

// Exit status of `taskring trace`: 0 when there is at least one cell, every
// expected cell is valid, no record was torn and no dispatch was discarded
// (unless the matrix allowed that); 3 otherwise. Zero valid cells is never 0.
int verdict_exit_code(const Trace& trace, const Matrix& matrix);

// Per-callable (hid) summary: chip.run mean/min/max and every sub-stage's
// mean/min/max with its sample count, indented by dotted depth.
std::string render_callable_summary(const Trace& trace, const std::vector<Invocation>& invs, const StageNames& names);

// Per-dispatch table of the busiest callable in the upstream column layout
// (Round, Host, Device, Effective, Orch, Sched); a missing span prints `—`
// and is left out of the averages, whose sample counts are shown.
std::string render_rounds_table(const Trace& trace, const std::vector<Invocation>& invs, const StageNames& names);

// Per-callable tree of median durations by dotted name, with the median
// Effective (orch ∪ sched) line.
std::string render_tree(const Trace& trace, const std::vector<Invocation>& invs, const StageNames& names);

// The (rank, round) matrix of effective µs (`—` for invalid cells), the
// statistics over valid cells, and the parse/validation verdict lines.
std::string render_matrix(const Trace& trace, const Matrix& matrix);

// The machine-readable report (schema in docs/trace.md), pretty-printed.
std::string render_json(const Trace& trace, const Matrix& matrix);

// Writes Chrome trace-event JSON to `path`: one process per rank (pid lane
// named after the rank), one thread lane per tid; `clk=dev` spans go to a
// per-process "device (clk=dev)" lane placed at their invocation's
// `runner_run` start (or root start) because their clock has its own origin.
Status write_chrome_trace(const Trace& trace, const std::vector<Invocation>& invs, const Matrix& matrix,
                          const StageNames& names, const std::string& path);

// Writes one self-contained HTML page to `path` (no network: styles, script
// and data inline): the (rank x round) matrix as a heat map whose invalid
// cells are marked and named, per-rank distributions of the valid cells, and
// a swimlane of one round (the first whose cells are all valid, else round 0):
// per rank a host lane, orchestrator, scheduler and device lanes, and one
// lane per core when the log holds device profile records. The page is drawn
// by its script; the element #report carries data-cells (cells drawn) once
// done, which the headless-browser test reads.
Status write_html_report(const Trace& trace, const std::vector<Invocation>& invs, const Matrix& matrix,
                         const StageNames& names, const std::string& path);

}  // namespace taskring::trace
