#include "taskring/trace/invocations.hpp"

#include <algorithm>
#include <map>
#include <unordered_set>

namespace taskring::trace {

bool has_dotted_suffix(std::string_view name, std::string_view suffix) {
  if (suffix.empty() || name.size() < suffix.size()) return false;
  if (name.substr(name.size() - suffix.size()) != suffix) return false;
  return name.size() == suffix.size() || name[name.size() - suffix.size() - 1] == '.';
}

Stage classify(std::string_view name, const StageNames& n) {
  if (name == n.root) return Stage::kRoot;
  if (has_dotted_suffix(name, n.orch)) return Stage::kOrch;
  if (has_dotted_suffix(name, n.sched)) return Stage::kSched;
  if (has_dotted_suffix(name, n.device_wall)) return Stage::kDeviceWall;
  return Stage::kOther;
}

std::vector<Invocation> group_invocations(const Trace& trace, const StageNames& names) {
  // Classify each distinct name once.
  std::vector<Stage> stage(trace.names.size());
  std::vector<char> excluded(trace.names.size(), 0);
  std::vector<char> prewarm(trace.names.size(), 0);
  for (size_t i = 0; i < trace.names.size(); ++i) {
    const std::string& nm = trace.names[i];
    stage[i] = classify(nm, names);
    for (const auto& p : names.excluded_prefixes) excluded[i] |= nm.compare(0, p.size(), p) == 0;
    prewarm[i] = !names.prewarm.empty() && nm.compare(0, names.prewarm.size(), names.prewarm) == 0;
  }
  std::map<std::pair<int64_t, uint64_t>, Invocation> groups;
  for (size_t i = 0; i < trace.spans.size(); ++i) {
    const Span& s = trace.spans[i];
    if (excluded[s.name_id]) continue;
    auto [it, inserted] = groups.try_emplace({s.pid, s.inv});
    Invocation& g = it->second;
    if (inserted) {
      g.pid = s.pid;
      g.inv = s.inv;
      g.hid = s.hid;
      g.first_span = i;
    }
    g.spans.push_back(static_cast<uint32_t>(i));
    g.prewarm |= prewarm[s.name_id] != 0;
    auto pick = [&](int64_t& slot) {
      if (slot < 0 || s.ts_ns < trace.spans[static_cast<size_t>(slot)].ts_ns) slot = static_cast<int64_t>(i);
    };
    switch (stage[s.name_id]) {
      case Stage::kRoot: pick(g.root); g.hid = trace.spans[static_cast<size_t>(g.root)].hid; break;
      case Stage::kDeviceWall: pick(g.device_wall); break;
      case Stage::kOrch: pick(g.orch); break;
      case Stage::kSched: pick(g.sched); break;
      case Stage::kOther: break;
    }
  }
  std::vector<Invocation> out;
  out.reserve(groups.size());
  std::unordered_set<uint32_t> seen;
  for (auto& [key, g] : groups) {
    seen.clear();
    for (uint32_t i : g.spans) {
      if (!seen.insert(trace.spans[i].name_id).second) ++g.duplicate_names;
    }
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace taskring::trace
