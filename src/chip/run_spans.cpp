#include "run_spans.hpp"

#include <algorithm>

#include "taskring/log/strace.hpp"

namespace taskring {

namespace strace = log::strace;

uint64_t callable_hash(std::string_view callable) { return strace::fnv1a64(callable); }

void emit_run_spans(std::string_view callable, uint64_t inv, const RunSpanTimes& t, const RunStats& s, bool device_ran,
                    int rank) {
  if (!strace::enabled()) return;
  const uint64_t hid = callable_hash(callable);
  // One write for the whole tree: a node's chips write into one pipe while
  // their peers are still inside the timed window.
  strace::SpanBatch batch;
  auto span = [&](std::string_view name, uint64_t begin, uint64_t end, int depth, const strace::Attrs& attrs) {
    batch.add(name, static_cast<int64_t>(begin), static_cast<int64_t>(end >= begin ? end - begin : 0), inv, hid, depth,
              attrs);
  };
  // Children first, parent last: a reader that sees chip.run has seen the
  // whole tree of that invocation before it.
  span("chip.run.bind", t.prepare_start_ns, t.prepare_end_ns, 1, strace::Attrs{});
  if (device_ran && s.orch_start_ns != 0) {
    // The sim device clock is the host monotonic clock, so device windows
    // carry real timestamps (clk=sim) and need no offset guessing.
    uint64_t sched_begin = s.sched_start_ns ? s.sched_start_ns : s.orch_start_ns;
    uint64_t sched_end = std::max(s.sched_end_ns, sched_begin);
    uint64_t wall_begin = std::min(s.orch_start_ns, sched_begin);
    uint64_t wall_end = std::max(s.orch_end_ns, sched_end);
    span("chip.run.runner_run.device_wall.orch", s.orch_start_ns, s.orch_end_ns, 3,
         strace::Attrs{{"clk", "sim"}, {"tasks", s.tasks_submitted}});
    span("chip.run.runner_run.device_wall.sched", sched_begin, sched_end, 3,
         strace::Attrs{{"clk", "sim"}, {"tasks", s.tasks_completed}});
    span("chip.run.runner_run.device_wall", wall_begin, wall_end, 2, strace::Attrs{{"clk", "sim"}});
  }
  span("chip.run.runner_run", t.launch_ns, t.done_ns, 1, strace::Attrs{});
  span("chip.run.validate", t.validate_start_ns, t.validate_end_ns, 1, strace::Attrs{});
  strace::Attrs top;
  top.add({"callable", callable});
  if (rank >= 0) top.add({"rank", rank});
  if (!device_ran) top.add({"skip_device_run", 1});
  span("chip.run", t.prepare_start_ns, t.validate_end_ns, 0, top);
}

}  // namespace taskring
