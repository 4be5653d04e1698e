#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "format.hpp"
#include "taskring/trace/report.hpp"

namespace taskring::trace {
namespace {

using nlohmann::json;

// Lane id of a pid's device (clk=dev) spans; Linux never hands out tid 0.
constexpr int64_t kDeviceTid = 0;
// Lane ids of the device profile's cores: above any Linux tid (pid_max <= 2^22).
constexpr int64_t kCoreTidBase = int64_t{1} << 30;

// The core lane of a device-profile span (attr core=N), if it is one.
std::optional<int64_t> core_lane(const Span& s) {
  auto core = find_attr(s.attrs, "core");
  if (!core) return std::nullopt;
  int64_t c = 0;
  auto [p, ec] = std::from_chars(core->data(), core->data() + core->size(), c);
  if (ec != std::errc() || p != core->data() + core->size() || c < 0 || c >= (int64_t{1} << 20)) return std::nullopt;
  return kCoreTidBase + c;
}

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

}  // namespace

Status write_chrome_trace(const Trace& t, const std::vector<Invocation>& invs, const Matrix& m, const StageNames&,
                          const std::string& path) {
  std::map<int64_t, int> rank_of;
  for (const RankInfo& r : m.rank_info) {
    for (int64_t pid : r.pids) rank_of[pid] = r.rank;
  }
  // Where each invocation's device clock origin is drawn: its runner_run (or root) host start.
  std::map<std::pair<int64_t, uint64_t>, int64_t> origin;
  for (const Invocation& inv : invs) {
    int64_t at = inv.root >= 0 ? t.spans[inv.root].ts_ns : INT64_MIN;
    for (uint32_t i : inv.spans) {
      const Span& s = t.spans[i];
      if (!s.device_clock && has_dotted_suffix(t.name(s), "runner_run")) at = s.ts_ns;
    }
    if (at != INT64_MIN) origin[{inv.pid, inv.inv}] = at;
  }
  json events = json::array();
  json unaligned = json::array();
  std::set<int64_t> pids;
  std::set<std::pair<int64_t, int64_t>> lanes;
  std::map<std::pair<int64_t, int64_t>, std::string> core_types;
  for (const Span& s : t.spans) {
    json args = {{"inv", std::to_string(s.inv)}, {"hid", detail::hex16(s.hid)}, {"depth", s.depth}};
    if (!s.attrs.empty()) args["attrs"] = s.attrs;
    json e = {{"name", t.name(s)}, {"ph", "X"}, {"pid", s.pid}, {"dur", us(s.dur_ns)}};
    if (s.device_clock) {
      // A device span with no host anchor (or one that overflows) is listed
      // as it is, not drawn.
      auto keep_unaligned = [&] {
        unaligned.push_back({{"name", t.name(s)},
                             {"pid", s.pid},
                             {"tid", s.tid},
                             {"ts_ns", std::to_string(s.ts_ns)},
                             {"dur_ns", std::to_string(s.dur_ns)},
                             {"args", args}});
      };
      auto it = origin.find({s.pid, s.inv});
      if (it == origin.end()) {
        keep_unaligned();
        continue;
      }
      int64_t at = 0;
      if (__builtin_add_overflow(it->second, s.ts_ns, &at)) {
        keep_unaligned();
        continue;
      }
      args["clock"] = "dev; drawn from the invocation's runner_run host start";
      e["cat"] = "device";
      e["tid"] = kDeviceTid;
      e["ts"] = us(at);
      lanes.insert({s.pid, kDeviceTid});
    } else {
      int64_t since = 0, wall = 0;
      if (const ClockAnchor* a = t.anchor(s.pid); a && a->mono_ns <= s.ts_ns &&
                                                  !__builtin_sub_overflow(s.ts_ns, a->mono_ns, &since) &&
                                                  !__builtin_add_overflow(a->wall_ns, since, &wall)) {
        args["wall_ts_ns"] = std::to_string(wall);
      }
      const std::optional<int64_t> core = core_lane(s);
      e["cat"] = core ? "core" : "host";
      e["tid"] = core ? *core : s.tid;
      e["ts"] = us(s.ts_ns);
      lanes.insert({s.pid, core ? *core : s.tid});
      if (core) core_types[{s.pid, *core}] = std::string(find_attr(s.attrs, "core_type").value_or(""));
    }
    e["args"] = std::move(args);
    pids.insert(s.pid);
    events.push_back(std::move(e));
  }
  for (int64_t pid : pids) {
    auto it = rank_of.find(pid);
    std::string name = it != rank_of.end() ? "rank " + std::to_string(it->second) + " (pid " + std::to_string(pid) + ")"
                                           : "pid " + std::to_string(pid);
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"args", {{"name", name}}}});
    events.push_back({{"ph", "M"},
                      {"name", "process_sort_index"},
                      {"pid", pid},
                      {"args", {{"sort_index", it != rank_of.end() ? it->second : 1 << 20}}}});
  }
  for (auto [pid, tid] : lanes) {
    std::string name = tid == kDeviceTid ? "device (clk=dev)" : "tid " + std::to_string(tid);
    int64_t sort = tid == kDeviceTid ? 1 : 0;  // host threads first, then device, then cores in id order
    if (tid >= kCoreTidBase) {
      const std::string& type = core_types[{pid, tid}];
      name = "core " + std::to_string(tid - kCoreTidBase) + (type.empty() ? "" : " (" + type + ")");
      sort = 2 + (tid - kCoreTidBase);
    }
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}});
    events.push_back(
        {{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", pid}, {"tid", tid}, {"args", {{"sort_index", sort}}}});
  }
  json anchors = json::array();
  for (const ClockAnchor& a : t.anchors) {
    anchors.push_back({{"pid", a.pid}, {"mono_ns", std::to_string(a.mono_ns)}, {"wall_ns", std::to_string(a.wall_ns)}});
  }
  json doc = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}, {"clockAnchors", std::move(anchors)}};
  if (!unaligned.empty()) doc["unalignedDeviceSpans"] = std::move(unaligned);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return unavailable("cannot write Chrome trace '" + path + "': " + std::strerror(errno));
  // Names come from the log: invalid UTF-8 is replaced, never thrown on.
  f << doc.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
  f.close();
  if (!f) return unavailable("cannot write Chrome trace '" + path + "': write failed");
  return Status::Ok();
}

}  // namespace taskring::trace
