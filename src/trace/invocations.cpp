#include "taskring/trace/invocations.hpp"

#include <algorithm>
#include <cstdint>

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
  // Sort span indices by (pid, inv, input order) and cut into groups; cheaper
  // than a node-based map on logs with millions of spans.
  std::vector<uint32_t> order;
  order.reserve(trace.spans.size());
  for (size_t i = 0; i < trace.spans.size(); ++i) {
    if (!excluded[trace.spans[i].name_id]) order.push_back(static_cast<uint32_t>(i));
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Span& x = trace.spans[a];
    const Span& y = trace.spans[b];
    if (x.pid != y.pid) return x.pid < y.pid;
    if (x.inv != y.inv) return x.inv < y.inv;
    return a < b;
  });
  std::vector<Invocation> out;
  std::vector<uint32_t> seen_stamp(trace.names.size(), UINT32_MAX);
  for (size_t k = 0; k < order.size();) {
    const Span& head = trace.spans[order[k]];
    Invocation g;
    g.pid = head.pid;
    g.inv = head.inv;
    g.hid = head.hid;
    g.first_span = order[k];
    const auto stamp = static_cast<uint32_t>(out.size());
    for (; k < order.size() && trace.spans[order[k]].pid == g.pid && trace.spans[order[k]].inv == g.inv; ++k) {
      const size_t i = order[k];
      const Span& s = trace.spans[i];
      g.spans.push_back(static_cast<uint32_t>(i));
      g.prewarm |= prewarm[s.name_id] != 0;
      if (seen_stamp[s.name_id] == stamp) ++g.duplicate_names;
      seen_stamp[s.name_id] = stamp;
      auto pick = [&](int64_t& slot) {
        if (slot < 0 || s.ts_ns < trace.spans[static_cast<size_t>(slot)].ts_ns) slot = static_cast<int64_t>(i);
      };
      switch (stage[s.name_id]) {
        case Stage::kRoot:
          pick(g.root);
          g.hid = trace.spans[static_cast<size_t>(g.root)].hid;
          break;
        case Stage::kDeviceWall: pick(g.device_wall); break;
        case Stage::kOrch: pick(g.orch); break;
        case Stage::kSched: pick(g.sched); break;
        case Stage::kOther: break;
      }
    }
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace taskring::trace
