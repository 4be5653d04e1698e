#include <nlohmann/json.hpp>

#include "taskring/trace/report.hpp"

namespace taskring::trace {
namespace {

using nlohmann::json;

json summary_json(const Summary& s) {
  json j = {{"n", s.n}};
  if (s.n == 0) return j;
  j["min"] = s.min;
  j["median"] = s.median;
  j["mean"] = s.mean;
  j["max"] = s.max;
  j["stdev"] = s.stdev;
  j["trimmed_mean"] = s.has_trimmed ? json(s.trimmed_mean) : json(nullptr);
  j["trimmed_each_side"] = s.trimmed_each_side;
  return j;
}

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

std::string render_json(const Trace& t, const Matrix& m) {
  const ParseCounts& c = t.counts;
  json j;
  j["schema"] = "taskring.trace/1";
  j["sources"] = t.sources;
  j["parse"] = {{"bytes", c.bytes},
                {"lines", c.lines},
                {"heads", c.heads},
                {"parsed", c.parsed},
                {"torn", c.torn},
                {"unknown_version", c.unknown_version},
                {"bad_escapes", c.bad_escapes},
                {"anchors", c.anchors},
                {"torn_anchors", c.torn_anchors},
                {"duplicate_anchors", c.duplicate_anchors},
                {"missing_anchors", c.missing_anchors}};
  json diags = json::array();
  for (const auto& d : t.diagnostics) {
    diags.push_back({{"kind", diagnostic_kind_name(d.kind)}, {"where", d.where}, {"message", d.message}});
  }
  j["diagnostics"] = diags;
  j["diagnostics_dropped"] = t.diagnostics_dropped;
  j["matrix"] = {{"ranks", m.ranks},
                 {"rounds", m.rounds},
                 {"warmup", m.warmup},
                 {"dispatches_per_round", m.dispatches_per_round},
                 {"rank_source", m.rank_source},
                 {"valid_cells", m.valid_cells},
                 {"invalid_cells", m.invalid_cells()}};
  json ranks = json::array();
  for (const auto& r : m.rank_info) {
    ranks.push_back({{"rank", r.rank},
                     {"pids", r.pids},
                     {"dispatches", r.dispatches},
                     {"effective_us", summary_json(m.rank_stats[static_cast<size_t>(r.rank)])}});
  }
  j["ranks"] = ranks;
  json cells = json::array();
  for (const auto& cell : m.cells) {
    json cj = {{"rank", cell.rank}, {"round", cell.round}, {"valid", cell.valid}, {"missing", cell.missing}};
    if (cell.valid) {
      cj["effective_us"] = cell.effective_us;
      cj["host_us"] = cell.host_us;
      cj["device_us"] = opt(cell.device_us);
      cj["orch_us"] = cell.orch_us;
      cj["sched_us"] = cell.sched_us;
    } else {
      cj["effective_us"] = nullptr;
    }
    cells.push_back(std::move(cj));
  }
  j["cells"] = cells;
  json rounds = json::array(), unions = json::array();
  for (auto& v : m.round_values) rounds.push_back(opt(v));
  for (auto& v : m.host_union) unions.push_back(opt(v));
  j["stats"] = {{"effective_us", summary_json(m.cell_stats)},
                {"per_round", {{"values", rounds}, {"effective_us", summary_json(m.round_stats)}}},
                {"host_union_us", {{"values", unions}, {"summary", summary_json(m.host_union_stats)}}}};
  if (m.host_speed) {
    json cpus = json::array(), nodes = json::array(), before = json::array(), after = json::array();
    bool l4 = false;
    for (const CpuSpeed& s : m.host_speed->before) {
      cpus.push_back(s.cpu), nodes.push_back(s.node), before.push_back(s.chunk_us);
      l4 = l4 || s.node >= 0;
    }
    for (const CpuSpeed& s : m.host_speed->after) after.push_back(s.chunk_us);
    j["host_speed"] = {{"cpus", cpus},
                       {"before_us", before},
                       {"after_us", after},
                       {"largest_change", m.host_speed->largest_change},
                       {"steady", m.host_speed->steady()}};
    if (l4) j["host_speed"]["nodes"] = nodes;
  }
  j["problems"] = m.problems;
  j["warnings"] = m.warnings;
  j["discarded_dispatches"] = m.discarded_dispatches;
  int rc = verdict_exit_code(t, m);
  j["status"] = rc == 0 ? "ok" : "invalid";
  j["exit_code"] = rc;
  // Names and messages come from the log: invalid UTF-8 is replaced, never thrown on.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace taskring::trace
