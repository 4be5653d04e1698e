// Builds synthetic multi-rank run logs in the shape the L2 runtime emits:
// per dispatch the children of chip.run, then chip.run itself at finalize.
#pragma once

#include <functional>
#include <string>

#include "strace_writer.hpp"

namespace taskring::trace::testing {

enum class Part { kRoot, kOrch, kSched, kDeviceWall, kBind };

struct RunSpec {
  int ranks = 2;
  int dispatches = 4;  // per rank, warmup included
  bool rank_attr = false;
  bool reverse_emit = false;  // ranks emit in descending order (rank attr tests)
  bool anchors = true;
  int64_t pid_base = 1000;         // rank r runs as pid pid_base + r
  int64_t t_base = 1'000'000'000;  // CLOCK_MONOTONIC ns of the first dispatch
  // Return true to leave `part` of dispatch `d` of rank `r` out of the log.
  std::function<bool(int r, int d, Part part)> drop;
  // Effective µs of dispatch d of rank r is 410 + extra(r, d).
  std::function<int(int r, int d)> extra = [](int r, int d) { return r * 10 + d; };
};

inline int64_t pid_of(const RunSpec& s, int r) { return s.pid_base + r; }

inline std::string run_log(const RunSpec& s) {
  std::string out;
  if (s.anchors) {
    for (int r = 0; r < s.ranks; ++r) out += anchor(pid_of(s, r), 1, 1'700'000'000'000'000'000) + "\n";
  }
  auto dropped = [&](int r, int d, Part p) { return s.drop && s.drop(r, d, p); };
  for (int d = 0; d < s.dispatches; ++d) {
    for (int i = 0; i < s.ranks; ++i) {
      const int r = s.reverse_emit ? s.ranks - 1 - i : i;
      SpanRec b;
      b.pid = pid_of(s, r);
      b.tid = b.pid + 1;
      b.inv = static_cast<uint64_t>(d + 1);
      const int64_t t0 = s.t_base + d * 10'000'000 + r * 1000;
      auto rec = [&](Part p, int depth, std::string name, int64_t ts, int64_t dur, std::string attrs) {
        if (dropped(r, d, p)) return;
        SpanRec x = b;
        x.depth = depth;
        x.name = std::move(name);
        x.ts = ts;
        x.dur = dur;
        x.attrs = std::move(attrs);
        out += strace(x) + "\n";
      };
      rec(Part::kBind, 1, "chip.run.bind", t0 + 100, 5000, "");
      rec(Part::kOrch, 3, "chip.run.runner_run.device_wall.orch", 10'000, 300'000, "clk=dev");
      rec(Part::kSched, 3, "chip.run.runner_run.device_wall.sched", 20'000, 400'000 + 1000 * s.extra(r, d), "clk=dev");
      rec(Part::kDeviceWall, 2, "chip.run.runner_run.device_wall", 0, 900'000, "clk=dev");
      rec(Part::kBind, 1, "chip.run.runner_run", t0 + 6000, 1'000'000, "");
      rec(Part::kBind, 1, "chip.run.validate", t0 + 1'007'000, 2000, "");
      rec(Part::kRoot, 0, "chip.run", t0, 1'010'000, s.rank_attr ? "rank=" + std::to_string(r) : "");
    }
  }
  return out;
}

}  // namespace taskring::trace::testing
