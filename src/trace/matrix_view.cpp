#include <cstdio>
#include <string>

#include "format.hpp"
#include "taskring/trace/report.hpp"

namespace taskring::trace {
namespace {

using detail::fmt1;
using detail::kMissing;
using detail::rpad;

std::string stats_line(const Summary& s) {
  if (s.n == 0) return "no valid samples";
  std::string out = "min=" + fmt1(s.min) + " median=" + fmt1(s.median) + " mean=" + fmt1(s.mean) +
                    " max=" + fmt1(s.max) + " stdev=" + fmt1(s.stdev);
  if (s.has_trimmed) {
    out += " trimmed_mean=" + fmt1(s.trimmed_mean) + " (dropped " + std::to_string(s.trimmed_each_side) + " low + " +
           std::to_string(s.trimmed_each_side) + " high)";
  }
  return out;
}

std::string opt(const std::optional<double>& v) { return v ? fmt1(*v) : std::string(kMissing); }

}  // namespace

int verdict_exit_code(const Trace& t, const Matrix& m) {
  const bool discarded = m.discarded_dispatches > 0 && !m.allow_discarded;
  return t.counts.parsed == 0 || t.counts.torn > 0 || m.valid_cells == 0 || m.invalid_cells() > 0 ||
                 !m.problems.empty() || discarded
             ? 3
             : 0;
}

std::string render_matrix(const Trace& t, const Matrix& m) {
  std::string out;
  out += "Validation: " + std::to_string(m.ranks) + " rank(s) by " + m.rank_source + " x " + std::to_string(m.rounds) +
         " round(s), warmup " + std::to_string(m.warmup) + ", " + std::to_string(m.dispatches_per_round) +
         " dispatch(es) per round\n";
  if (m.ranks > 0 && m.rounds > 0) {
    const size_t w = 10;
    out += rpad("Round", 7);
    for (int r = 0; r < m.ranks; ++r) out += "  " + rpad("rank " + std::to_string(r), w);
    out += "  " + rpad("max (us)", w) + "  " + rpad("host union", w) + "\n";
    for (int k = 0; k < m.rounds; ++k) {
      out += rpad(std::to_string(k), 7);
      for (int r = 0; r < m.ranks; ++r) {
        const Cell& c = m.cell(r, k);
        out += "  " + rpad(c.valid ? fmt1(c.effective_us) : std::string(kMissing), w);
      }
      out += "  " + rpad(opt(m.round_values[k]), w) + "  " + rpad(opt(m.host_union[k]), w) + "\n";
    }
  }
  out += "effective_us (" + std::to_string(m.cell_stats.n) + " valid cells): " + stats_line(m.cell_stats) + "\n";
  size_t valid_rounds = 0;
  for (auto& v : m.round_values) valid_rounds += v.has_value();
  out += "per round, max across ranks (" + std::to_string(valid_rounds) + " of " + std::to_string(m.rounds) +
         " rounds valid): " + stats_line(m.round_stats) + "\n";
  for (int r = 0; r < m.ranks; ++r) {
    const RankInfo& ri = m.rank_info[r];
    std::string pids;
    for (size_t i = 0; i < ri.pids.size(); ++i) pids += (i ? "," : "") + std::to_string(ri.pids[i]);
    out += "  rank " + std::to_string(r) + " (pid " + (pids.empty() ? std::string(kMissing) : pids) + ", " +
           std::to_string(ri.dispatches) + " dispatches): " + stats_line(m.rank_stats[r]) + "\n";
  }
  out += "host_union_us (diagnostic: union of chip.run windows across ranks per round, " +
         std::to_string(m.host_union_stats.n) + " rounds): " + stats_line(m.host_union_stats) + "\n";
  if (m.host_speed) {
    char change[64];
    std::snprintf(change, sizeof(change), "; largest change %.0f %% (%s)\n", 100 * m.host_speed->largest_change,
                  m.host_speed->steady() ? "steady" : "moved");
    out += "host speed (diagnostic: a fixed chunk on each CPU before and after the rounds, us): " +
           host_speed_timings(*m.host_speed) + change;
  }
  const ParseCounts& c = t.counts;
  out += "records: " + std::to_string(c.heads) + " [STRACE] heads, " + std::to_string(c.parsed) + " parsed, " +
         std::to_string(c.torn) + " torn, " + std::to_string(c.unknown_version) +
         " unknown version; anchors: " + std::to_string(c.anchors) + " (" + std::to_string(c.missing_anchors) +
         " pid(s) without, " + std::to_string(c.duplicate_anchors) + " duplicate, " + std::to_string(c.torn_anchors) +
         " torn)\n";
  for (const auto& d : t.diagnostics) {
    if (d.kind == Diagnostic::Kind::kMissingAnchor) continue;  // summarised in the counts above
    out += "warning: " + detail::printable(d.where) + ": " + detail::printable(d.message) + "\n";
  }
  if (t.diagnostics_dropped)
    out += "warning: " + std::to_string(t.diagnostics_dropped) + " more diagnostic(s) not shown\n";
  for (const auto& w : m.warnings) out += "warning: " + detail::printable(w) + "\n";
  const size_t total = m.cells.size();
  if (verdict_exit_code(t, m) == 0) {
    out += "trace: OK \xE2\x80\x94 " + std::to_string(m.valid_cells) + "/" + std::to_string(total) + " cells valid, " +
           std::to_string(m.ranks) + " ranks, 0 torn records\n";
    return out;
  }
  if (c.parsed == 0) {
    out += "trace: INVALID \xE2\x80\x94 no timing records found (" + std::to_string(c.bytes) + " bytes, " +
           std::to_string(c.heads) + " [STRACE] head(s), none parsed)\n";
    return out;
  }
  out += "trace: INVALID \xE2\x80\x94 " + std::to_string(m.invalid_cells()) + " of " + std::to_string(total) +
         " cells invalid, " + std::to_string(c.torn) + " torn record(s) (of " + std::to_string(c.heads) + ")";
  if (m.discarded_dispatches > 0) {
    out += ", " + std::to_string(m.discarded_dispatches) + " dispatch(es) discarded" +
           (m.allow_discarded ? " (allowed)" : " (pass --allow-discarded to accept that)");
  }
  if (m.valid_cells == 0) out += "; no valid cell";
  out += "\n";
  constexpr size_t kShown = 50;
  for (size_t i = 0; i < m.problems.size() && i < kShown; ++i)
    out += "  invalid: " + detail::printable(m.problems[i]) + "\n";
  if (m.problems.size() > kShown) out += "  ... and " + std::to_string(m.problems.size() - kShown) + " more\n";
  return out;
}

}  // namespace taskring::trace
