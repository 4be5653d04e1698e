#include "taskring/trace/matrix.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdio>
#include <functional>
#include <map>
#include <string_view>

namespace taskring::trace {
namespace {

struct PidDispatches {
  int64_t pid = 0;
  size_t first_span = 0;
  std::vector<const Invocation*> dispatches;  // by inv
  std::optional<int> rank_attr;
  bool rank_conflict = false;
  // Span of its host root windows (CLOCK_MONOTONIC, comparable across pids).
  int64_t first_ns = INT64_MAX, last_ns = INT64_MIN;
};

using RankPids = std::map<int, std::vector<const PidDispatches*>>;

// Rank -> its pids in appearance order. Pids whose rank cannot be used are
// warned about and their dispatches counted as discarded.
RankPids assign_ranks(const std::vector<PidDispatches*>& pids, bool use_attr, const StageNames& names, Matrix& m) {
  RankPids rank_pids;
  for (size_t i = 0; i < pids.size(); ++i) {
    PidDispatches* p = pids[i];
    if (!use_attr) {
      rank_pids[static_cast<int>(i)].push_back(p);
      continue;
    }
    if (p->rank_attr && *p->rank_attr > kMaxRank) {
      m.warnings.push_back("pid " + std::to_string(p->pid) + " names rank " + std::to_string(*p->rank_attr) +
                           ", above the limit " + std::to_string(kMaxRank) + "; its " +
                           std::to_string(p->dispatches.size()) + " dispatch(es) are ignored");
      m.discarded_dispatches += p->dispatches.size();
      continue;
    }
    if (!p->rank_attr) {
      m.warnings.push_back("pid " + std::to_string(p->pid) + " has no integer rank= attr on " + names.root + "; its " +
                           std::to_string(p->dispatches.size()) + " dispatch(es) are ignored");
      m.discarded_dispatches += p->dispatches.size();
      continue;
    }
    if (p->rank_conflict) {
      m.warnings.push_back("pid " + std::to_string(p->pid) + " carries more than one rank= value; using rank " +
                           std::to_string(*p->rank_attr));
    }
    rank_pids[*p->rank_attr].push_back(p);
  }
  return rank_pids;
}

// One rank is one process at a time: a rank whose pids' root windows overlap
// was written by two runs at once (concurrent runs appending to one log), and
// its rounds would mix unrelated processes. A warning; with expected ranks a
// problem too, so the verdict fails.
void check_rank_overlaps(const RankPids& rank_pids, bool ranks_expected, Matrix& m) {
  for (const auto& [rank, ps] : rank_pids) {
    std::vector<const PidDispatches*> timed;
    for (const PidDispatches* p : ps) {
      if (p->first_ns <= p->last_ns) timed.push_back(p);
    }
    std::sort(timed.begin(), timed.end(), [](auto* a, auto* b) { return a->first_ns < b->first_ns; });
    const PidDispatches* latest = nullptr;  // the pid whose window ends last so far
    for (const PidDispatches* p : timed) {
      if (latest && p->first_ns < latest->last_ns) {
        std::string line = "rank " + std::to_string(rank) + " is claimed by pids " + std::to_string(latest->pid) +
                           " and " + std::to_string(p->pid) + " at overlapping times: two runs wrote one log?";
        m.warnings.push_back(line);
        if (ranks_expected) m.problems.push_back(std::move(line));
      }
      if (!latest || p->last_ns > latest->last_ns) latest = p;
    }
  }
}

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

std::optional<int> parse_rank(std::string_view v) {
  int r = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), r);
  if (ec != std::errc() || p != v.data() + v.size() || r < 0) return std::nullopt;
  return r;
}

std::string cell_name(int rank, int round, const RankInfo& info) {
  std::string s = "rank " + std::to_string(rank);
  if (info.pids.size() == 1) s += " (pid " + std::to_string(info.pids[0]) + ")";
  return s + " round " + std::to_string(round);
}

// Statistics over valid cells only: per rank, over all cells, per round (max
// across ranks) and the host-union diagnostic. `d`: dispatches per round.
void summarize_cells(Matrix& m, size_t d) {
  std::vector<double> all;
  m.rank_stats.resize(static_cast<size_t>(m.ranks));
  for (int r = 0; r < m.ranks; ++r) {
    std::vector<double> v;
    for (int k = 0; k < m.rounds; ++k) {
      const Cell& c = m.cell(r, k);
      if (c.valid) v.push_back(c.effective_us);
    }
    all.insert(all.end(), v.begin(), v.end());
    m.rank_stats[static_cast<size_t>(r)] = summarize(std::move(v));
  }
  m.cell_stats = summarize(std::move(all));
  std::vector<double> rounds_v, union_v;
  for (int k = 0; k < m.rounds; ++k) {
    bool ok = m.ranks > 0;
    double mx = 0;
    std::vector<Window> hw;
    bool roots_all = m.ranks > 0;
    for (int r = 0; r < m.ranks; ++r) {
      const Cell& c = m.cell(r, k);
      if (c.valid) mx = std::max(mx, c.effective_us);
      ok &= c.valid;
      roots_all &= c.valid || (!c.host_windows.empty() && c.host_windows.size() == d);
      hw.insert(hw.end(), c.host_windows.begin(), c.host_windows.end());
    }
    m.round_values.push_back(ok ? std::optional<double>(mx) : std::nullopt);
    if (ok) rounds_v.push_back(mx);
    if (roots_all) {
      double u = us(union_length(hw));
      m.host_union.push_back(u);
      union_v.push_back(u);
    } else {
      m.host_union.push_back(std::nullopt);
    }
  }
  m.round_stats = summarize(std::move(rounds_v));
  m.host_union_stats = summarize(std::move(union_v));
}

// Group: the non-prewarm dispatches of each pid, with its rank attr and the
// span of its host root windows; returned in order of first appearance.
std::vector<PidDispatches> group_by_pid(const Trace& trace, const std::vector<Invocation>& invocations) {
  std::map<int64_t, PidDispatches> by_pid;
  for (const Invocation& inv : invocations) {
    if (inv.prewarm) continue;
    PidDispatches& p = by_pid[inv.pid];
    if (p.dispatches.empty()) {
      p.pid = inv.pid;
      p.first_span = inv.first_span;
    }
    p.first_span = std::min(p.first_span, inv.first_span);
    p.dispatches.push_back(&inv);  // invocations are sorted by (pid, inv)
    if (inv.root >= 0) {
      const Span& root = trace.spans[static_cast<size_t>(inv.root)];
      if (!root.device_clock) {
        p.first_ns = std::min(p.first_ns, root.ts_ns);
        p.last_ns = std::max(p.last_ns, root.end_ns());
      }
      auto v = find_attr(root.attrs, "rank");
      if (v) {
        auto r = parse_rank(*v);
        if (r && p.rank_attr && *p.rank_attr != *r) p.rank_conflict = true;
        if (r && !p.rank_attr) p.rank_attr = r;
      }
    }
  }
  std::vector<PidDispatches> pids;
  for (auto& [pid, p] : by_pid) pids.push_back(std::move(p));
  std::sort(pids.begin(), pids.end(), [](const auto& a, const auto& b) { return a.first_span < b.first_span; });
  return pids;
}

// Group: sets m.ranks (expected, or seen) and m.rank_info, warns about ranks
// beyond it, and returns each rank's dispatches in pid-appearance then inv
// order. Fails when the log holds more ranks than kMaxRanks.
Expected<std::vector<std::vector<const Invocation*>>> dispatches_per_rank(const RankPids& rank_pids,
                                                                          const MatrixOptions& o, Matrix& m) {
  // Bounded: attr ranks are <= kMaxRank; pid ranks are counted before use.
  int64_t seen_ranks = rank_pids.empty() ? 0 : int64_t{rank_pids.rbegin()->first} + 1;
  if (!o.ranks && seen_ranks > kMaxRanks) {
    return invalid_argument("the log holds " + std::to_string(seen_ranks) + " ranks, above the limit " +
                            std::to_string(kMaxRanks));
  }
  m.ranks = o.ranks ? *o.ranks : static_cast<int>(seen_ranks);
  for (const auto& [rank, ps] : rank_pids) {
    if (rank >= m.ranks) {
      m.warnings.push_back("rank " + std::to_string(rank) + " (pid " + std::to_string(ps[0]->pid) + ") is beyond the " +
                           std::to_string(m.ranks) + " expected rank(s); ignored");
      for (const PidDispatches* p : ps) m.discarded_dispatches += p->dispatches.size();
    }
  }
  std::vector<std::vector<const Invocation*>> rank_dispatches(static_cast<size_t>(m.ranks));
  m.rank_info.resize(static_cast<size_t>(m.ranks));
  for (int r = 0; r < m.ranks; ++r) {
    RankInfo& info = m.rank_info[static_cast<size_t>(r)];
    info.rank = r;
    auto it = rank_pids.find(r);
    if (it != rank_pids.end()) {
      for (const PidDispatches* p : it->second) {
        info.pids.push_back(p->pid);
        auto& d = rank_dispatches[static_cast<size_t>(r)];
        d.insert(d.end(), p->dispatches.begin(), p->dispatches.end());
      }
    }
    info.dispatches = rank_dispatches[static_cast<size_t>(r)].size();
  }
  return rank_dispatches;
}

// Validate: sets m.dispatches_per_round and m.rounds (expected, or inferred
// from the busiest rank), refuses too many cells, and names every rank whose
// dispatch count does not fit (none seen: a problem; too many or a partial
// round: a warning).
Status size_rounds(const MatrixOptions& o, const StageNames& names, Matrix& m) {
  size_t max_count = 0;
  for (const RankInfo& info : m.rank_info) max_count = std::max(max_count, info.dispatches);
  const size_t warm = static_cast<size_t>(o.warmup);
  if (o.dispatches_per_round) {
    m.dispatches_per_round = *o.dispatches_per_round;
  } else if (o.rounds) {
    m.dispatches_per_round = std::max<int>(1, static_cast<int>(max_count / (warm + static_cast<size_t>(*o.rounds))));
  }
  const size_t d = static_cast<size_t>(m.dispatches_per_round);
  if (o.rounds) {
    m.rounds = *o.rounds;
  } else {
    // max_count <= spans in the log (< Trace::kMaxSpans), so this fits an int.
    size_t total_rounds = (max_count + d - 1) / d;
    m.rounds = total_rounds > warm ? static_cast<int>(total_rounds - warm) : 0;
  }
  if (int64_t cells = int64_t{m.ranks} * m.rounds; cells > kMaxCells) {
    return invalid_argument(std::to_string(m.ranks) + " ranks x " + std::to_string(m.rounds) + " rounds = " +
                            std::to_string(cells) + " cells, above the limit " + std::to_string(kMaxCells));
  }
  if (m.ranks == 0 && (o.rounds || o.ranks)) m.problems.push_back("no rank dispatched any " + names.root);
  const size_t expected_count = d * (warm + static_cast<size_t>(m.rounds));
  for (int r = 0; r < m.ranks; ++r) {
    size_t c = m.rank_info[static_cast<size_t>(r)].dispatches;
    if (c == 0) {
      m.problems.push_back("rank " + std::to_string(r) + ": no dispatch seen (all " + std::to_string(m.rounds) +
                           " round(s) missing)");
    } else if (c > expected_count) {
      m.warnings.push_back("rank " + std::to_string(r) + ": " + std::to_string(c) + " dispatches, expected " +
                           std::to_string(d) + " x (" + std::to_string(warm) + " warmup + " + std::to_string(m.rounds) +
                           " rounds) = " + std::to_string(expected_count) + "; the last " +
                           std::to_string(c - expected_count) + " are ignored");
      m.discarded_dispatches += c - expected_count;
    } else if (c % d != 0) {
      m.warnings.push_back("rank " + std::to_string(r) + ": " + std::to_string(c) +
                           " dispatches is not a multiple of " + std::to_string(d) + " per round");
    }
  }
  return Status();
}

// Fill: one dispatch's spans into cell `c`; false when `device_wall` is missing.
bool add_dispatch(Cell& c, const Invocation& inv, const std::string& tag, const Trace& trace, const StageNames& names,
                  const MatrixOptions& o) {
  auto span = [&](int64_t idx) -> const Span* { return idx < 0 ? nullptr : &trace.spans[static_cast<size_t>(idx)]; };
  const Span* root = span(inv.root);
  const Span* orch = span(inv.orch);
  const Span* sched = span(inv.sched);
  const Span* dw = span(inv.device_wall);
  std::string inv_tag = tag + " [inv " + std::to_string(inv.inv) + "]";
  if (!root && o.require_root) c.missing.push_back(names.root + inv_tag);
  if (!orch && o.require_orch) c.missing.push_back("orch" + inv_tag);
  if (!sched && o.require_sched) c.missing.push_back("sched" + inv_tag);
  std::vector<Window> w;
  if (orch) w.push_back({orch->ts_ns, orch->end_ns()}), c.orch_us += us(orch->dur_ns);
  if (sched) w.push_back({sched->ts_ns, sched->end_ns()}), c.sched_us += us(sched->dur_ns);
  c.effective_us += us(union_length(w));
  if (root) {
    c.host_us += us(root->dur_ns);
    c.host_windows.push_back({root->ts_ns, root->end_ns()});
  }
  if (dw) c.device_us = c.device_us.value_or(0) + us(dw->dur_ns);
  return dw != nullptr;
}

// Fill: the cell of rank r, measured round k from the rank's dispatches.
void fill_cell(Cell& c, int r, int k, const std::vector<const Invocation*>& disp, const Trace& trace,
               const std::vector<Invocation>& invocations, const StageNames& names, const MatrixOptions& o, size_t d) {
  c.rank = r;
  c.round = k;
  bool device_all = true;
  const size_t first = (static_cast<size_t>(o.warmup) + static_cast<size_t>(k)) * d;
  for (size_t j = 0; j < d; ++j) {
    std::string tag = d > 1 ? " (dispatch " + std::to_string(j + 1) + " of " + std::to_string(d) + ")" : "";
    if (first + j >= disp.size()) {
      // One line for all the dispatches the log does not hold, however large D is.
      c.missing.push_back(d == 1       ? std::string("no dispatch")
                          : j + 1 == d ? "no dispatch" + tag
                                       : "no dispatch (dispatches " + std::to_string(j + 1) + ".." + std::to_string(d) +
                                             " of " + std::to_string(d) + ")");
      device_all = false;
      break;
    }
    const Invocation& inv = *disp[first + j];
    c.dispatches.push_back(static_cast<size_t>(&inv - invocations.data()));
    if (!add_dispatch(c, inv, tag, trace, names, o)) device_all = false;
  }
  if (!device_all) c.device_us.reset();
  c.valid = c.missing.empty();
}

// Fill: every cell, counting the valid ones and naming each invalid cell of a
// rank that dispatched at all as a problem.
void fill_cells(Matrix& m, const std::vector<std::vector<const Invocation*>>& rank_dispatches, const Trace& trace,
                const std::vector<Invocation>& invocations, const StageNames& names, const MatrixOptions& o) {
  const size_t d = static_cast<size_t>(m.dispatches_per_round);
  m.cells.resize(static_cast<size_t>(m.ranks) * static_cast<size_t>(m.rounds));
  for (int r = 0; r < m.ranks; ++r) {
    const RankInfo& info = m.rank_info[static_cast<size_t>(r)];
    for (int k = 0; k < m.rounds; ++k) {
      Cell& c = m.cells[static_cast<size_t>(r * m.rounds + k)];
      fill_cell(c, r, k, rank_dispatches[static_cast<size_t>(r)], trace, invocations, names, o, d);
      if (c.valid) {
        ++m.valid_cells;
      } else if (info.dispatches > 0) {
        std::string line = cell_name(r, k, info) + ": missing ";
        for (size_t i = 0; i < c.missing.size(); ++i) line += (i ? ", " : "") + c.missing[i];
        m.problems.push_back(std::move(line));
      }
    }
  }
}

}  // namespace

std::string_view matrix_field_name(MatrixField f) {
  switch (f) {
    case MatrixField::kRanks: return "ranks";
    case MatrixField::kRounds: return "rounds";
    case MatrixField::kWarmup: return "warmup";
    case MatrixField::kDispatchesPerRound: return "dispatches_per_round";
  }
  return "?";
}

Status check_matrix_options(const MatrixOptions& o, const std::function<std::string(MatrixField)>& name) {
  auto named = [&](MatrixField f) { return name ? name(f) : std::string(matrix_field_name(f)); };
  auto below = [&](MatrixField f, int v, int least) {
    return invalid_argument(named(f) + " must be >= " + std::to_string(least) + ", got " + std::to_string(v));
  };
  auto over = [&](MatrixField f, int64_t v, int64_t limit) {
    return invalid_argument(named(f) + " " + std::to_string(v) + " is above the limit " + std::to_string(limit));
  };
  if (o.ranks && *o.ranks <= 0) return below(MatrixField::kRanks, *o.ranks, 1);
  if (o.rounds && *o.rounds <= 0) return below(MatrixField::kRounds, *o.rounds, 1);
  if (o.warmup < 0) return below(MatrixField::kWarmup, o.warmup, 0);
  if (o.dispatches_per_round && *o.dispatches_per_round <= 0) {
    return below(MatrixField::kDispatchesPerRound, *o.dispatches_per_round, 1);
  }
  if (o.ranks && *o.ranks > kMaxRanks) return over(MatrixField::kRanks, *o.ranks, kMaxRanks);
  if (o.rounds && *o.rounds > kMaxRounds) return over(MatrixField::kRounds, *o.rounds, kMaxRounds);
  if (o.warmup > kMaxWarmup) return over(MatrixField::kWarmup, o.warmup, kMaxWarmup);
  if (o.dispatches_per_round && *o.dispatches_per_round > kMaxDispatchesPerRound) {
    return over(MatrixField::kDispatchesPerRound, *o.dispatches_per_round, kMaxDispatchesPerRound);
  }
  return Status();
}

Expected<Matrix> build_matrix(const Trace& trace, const std::vector<Invocation>& invocations, const StageNames& names,
                              const MatrixOptions& o) {
  if (Status s = check_matrix_options(o); !s.ok()) return s;
  std::vector<PidDispatches> by_pid = group_by_pid(trace, invocations);
  std::vector<PidDispatches*> pids;
  for (PidDispatches& p : by_pid) pids.push_back(&p);

  Matrix m;
  m.warmup = o.warmup;
  bool all_attr =
      !pids.empty() && std::all_of(pids.begin(), pids.end(), [](auto* p) { return p->rank_attr.has_value(); });
  bool use_attr = o.rank_by == RankBy::kAttr || (o.rank_by == RankBy::kAuto && all_attr);
  m.rank_source = use_attr ? "attr" : "pid";
  m.allow_discarded = o.allow_discarded;

  const RankPids rank_pids = assign_ranks(pids, use_attr, names, m);
  check_rank_overlaps(rank_pids, o.ranks.has_value(), m);
  auto rank_dispatches = dispatches_per_rank(rank_pids, o, m);
  if (!rank_dispatches.ok()) return rank_dispatches.status();
  if (Status s = size_rounds(o, names, m); !s.ok()) return s;
  fill_cells(m, *rank_dispatches, trace, invocations, names, o);
  summarize_cells(m, static_cast<size_t>(m.dispatches_per_round));
  return m;
}

}  // namespace taskring::trace

namespace taskring::trace {

std::string host_speed_timings(const HostSpeedCheck& h) {
  std::string out;
  char buf[64];
  for (size_t i = 0; i < h.before.size() && i < h.after.size(); ++i) {
    if (i) out += ", ";
    if (h.before[i].node >= 0) out += "node" + std::to_string(h.before[i].node) + " ";
    std::snprintf(buf, sizeof(buf), "cpu%d %.1f -> %.1f", h.before[i].cpu, h.before[i].chunk_us, h.after[i].chunk_us);
    out += buf;
  }
  return out;
}

void set_host_speed(Matrix& m, std::vector<CpuSpeed> before, std::vector<CpuSpeed> after) {
  if (before.empty() || after.empty()) return;
  HostSpeedCheck h;
  h.largest_change = largest_speed_change(before, after);
  h.before = std::move(before);
  h.after = std::move(after);
  if (!h.steady()) {
    char pct[32];
    std::snprintf(pct, sizeof(pct), "%.0f %%", 100 * h.largest_change);
    m.warnings.push_back("the host's CPU speed moved by " + std::string(pct) +
                         " between the start and the end of the run (" + host_speed_timings(h) +
                         " us per probe chunk): these figures do not compare with other runs'");
  }
  m.host_speed = std::move(h);
}

}  // namespace taskring::trace
