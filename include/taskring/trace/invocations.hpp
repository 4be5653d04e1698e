// Grouping of spans into invocations (one run of one callable in one process)
// and classification of span names into the stages the analysis needs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "taskring/trace/span.hpp"

namespace taskring::trace {

// Which span names play which role. Names are matched by suffix on dotted
// segments, so `chip.run.runner_run.device_wall.orch` and a shorter
// `chip.run.device_wall.orch` both count as the orchestrator window.
struct StageNames {
  std::string root = "chip.run";            // exact name of the depth-0 run span
  std::string device_wall = "device_wall";  // suffix of the device window
  std::string orch = "device_wall.orch";    // suffix of the orchestrator window
  std::string sched = "device_wall.sched";  // suffix of the scheduler window
  std::string prewarm = "chip.prewarm";     // prefix of setup-only groups (never a round)
  // Families that carry no valid invocation id (host scheduler, external
  // producers); they are left out of invocations.
  std::vector<std::string> excluded_prefixes = {"node.", "network", "ext."};
};

enum class Stage { kOther, kRoot, kDeviceWall, kOrch, kSched };

// Classifies one span name.
Stage classify(std::string_view name, const StageNames& names);

// True when `name` equals `suffix` or ends with "." + suffix.
bool has_dotted_suffix(std::string_view name, std::string_view suffix);

// The spans of one (pid, inv). Stage fields hold the index (into
// Trace::spans) of the earliest-ts span of that stage, or -1.
struct Invocation {
  int64_t pid = 0;
  uint64_t inv = 0;
  uint64_t hid = 0;             // the root's hid, else the first span's
  size_t first_span = 0;        // index of the group's first span in input order
  std::vector<uint32_t> spans;  // indices into Trace::spans, in input order
  int64_t root = -1;
  int64_t device_wall = -1;
  int64_t orch = -1;
  int64_t sched = -1;
  uint32_t duplicate_names = 0;  // spans whose name already occurred in this group
  bool prewarm = false;          // a setup-only group; not counted as a dispatch
};

// Groups the trace's spans by (pid, inv), sorted by (pid, inv), leaving out
// the excluded families.
std::vector<Invocation> group_invocations(const Trace& trace, const StageNames& names);

}  // namespace taskring::trace
