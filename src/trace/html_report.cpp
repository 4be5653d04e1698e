// `taskring trace --html`: one self-contained page. The analysis is done
// here; the page gets it as inline JSON and draws it with an inline script
// (no network, no library). Text from the log reaches the page only through
// textContent / attributes set by the script, never as markup.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "format.hpp"
#include "taskring/trace/report.hpp"

namespace taskring::trace {
namespace {

using nlohmann::json;

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

std::string lane_of(const Trace& t, const Span& s, const StageNames& names) {
  switch (classify(t.name(s), names)) {
    case Stage::kOrch: return "orchestrator";
    case Stage::kSched: return "scheduler";
    case Stage::kDeviceWall: return "device";
    default: break;
  }
  if (auto core = find_attr(s.attrs, "core")) return "core " + std::string(*core);  // device profile
  if (s.device_clock) return "device";
  return s.depth == 0 ? "host" : "host." + std::to_string(s.depth);  // nested host spans get lanes of their own
}

// The round drawn as a swimlane: the first whose cells are all valid, else 0.
int swim_round(const Matrix& m) {
  for (int k = 0; k < m.rounds; ++k) {
    if (m.round_values[static_cast<size_t>(k)]) return k;
  }
  return 0;
}

// Spans of every rank's dispatches in round `k`, in µs from the earliest host
// start of that round. Device-clock spans are drawn from their invocation's
// runner_run (or root) host start, as in the Chrome view.
json swimlane(const Trace& t, const std::vector<Invocation>& invs, const Matrix& m, const StageNames& names, int k) {
  json lanes = json::array();
  if (m.rounds == 0) return {{"round", 0}, {"lanes", lanes}};
  struct Item {
    int rank;
    const Span* s;
    int64_t at;
  };
  std::vector<Item> items;
  int64_t t0 = INT64_MAX;
  for (int r = 0; r < m.ranks; ++r) {
    for (size_t di : m.cell(r, k).dispatches) {
      const Invocation& inv = invs[di];
      int64_t origin = inv.root >= 0 ? t.spans[static_cast<size_t>(inv.root)].ts_ns : INT64_MIN;
      for (uint32_t i : inv.spans) {
        const Span& s = t.spans[i];
        if (!s.device_clock && has_dotted_suffix(t.name(s), "runner_run")) origin = s.ts_ns;
      }
      for (uint32_t i : inv.spans) {
        const Span& s = t.spans[i];
        int64_t at = s.ts_ns;
        if (s.device_clock && (origin == INT64_MIN || __builtin_add_overflow(origin, s.ts_ns, &at))) continue;
        items.push_back({r, &s, at});
        if (!s.device_clock) t0 = std::min(t0, at);
      }
    }
  }
  if (items.empty()) return {{"round", k}, {"lanes", lanes}};
  if (t0 == INT64_MAX) t0 = items[0].at;
  std::map<std::pair<int, std::string>, json> by_lane;
  for (const Item& it : items) {
    int64_t rel = 0;
    if (__builtin_sub_overflow(it.at, t0, &rel)) continue;
    by_lane[{it.rank, lane_of(t, *it.s, names)}].push_back(
        {{"name", t.name(*it.s)}, {"start_us", us(rel)}, {"dur_us", us(it.s->dur_ns)}});
  }
  // Lane order within a rank: host, orchestrator, scheduler, device, cores.
  auto order = [](const std::string& lane) {
    if (lane.rfind("host", 0) == 0) return 0;
    if (lane == "orchestrator") return 1;
    if (lane == "scheduler") return 2;
    if (lane == "device") return 3;
    return 4;
  };
  std::vector<std::pair<std::pair<int, std::string>, json*>> sorted;
  for (auto& [key, spans] : by_lane) sorted.push_back({key, &spans});
  std::stable_sort(sorted.begin(), sorted.end(), [&](const auto& a, const auto& b) {
    if (a.first.first != b.first.first) return a.first.first < b.first.first;
    return order(a.first.second) < order(b.first.second);
  });
  for (auto& [key, spans] : sorted) lanes.push_back({{"rank", key.first}, {"lane", key.second}, {"spans", *spans}});
  return {{"round", k}, {"lanes", lanes}};
}

json page_data(const Trace& t, const std::vector<Invocation>& invs, const Matrix& m, const StageNames& names) {
  json labels = json::array();
  for (const RankInfo& r : m.rank_info) {
    std::string pids;
    for (size_t i = 0; i < r.pids.size(); ++i) pids += (i ? "," : "") + std::to_string(r.pids[i]);
    labels.push_back("rank " + std::to_string(r.rank) + (pids.empty() ? " (not seen)" : " (pid " + pids + ")"));
  }
  json values = json::array(), missing = json::array();
  for (size_t i = 0; i < m.cells.size(); ++i) {
    const Cell& c = m.cells[i];
    values.push_back(c.valid ? json(c.effective_us) : json(nullptr));
    if (!c.valid) {
      std::string why;
      for (size_t j = 0; j < c.missing.size(); ++j) why += (j ? ", " : "") + c.missing[j];
      missing.push_back({i, why});
    }
  }
  const int rc = verdict_exit_code(t, m);
  return {{"ranks", m.ranks},
          {"rounds", m.rounds},
          {"warmup", m.warmup},
          {"dispatches_per_round", m.dispatches_per_round},
          {"rank_source", m.rank_source},
          {"rank_labels", labels},
          {"values", values},
          {"missing", missing},
          {"valid_cells", m.valid_cells},
          {"problems", m.problems},
          {"warnings", m.warnings},
          {"sources", t.sources},
          {"records", {{"heads", t.counts.heads}, {"parsed", t.counts.parsed}, {"torn", t.counts.torn}}},
          {"status", rc == 0 ? "OK" : "INVALID"},
          {"swimlane", swimlane(t, invs, m, names, swim_round(m))}};
}

constexpr const char* kHead = R"html(<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>taskring trace</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
.ok{color:#176b2c}.bad{color:#b00020}
table.heat{border-collapse:collapse;font-size:12px}
table.heat th{font-weight:normal;color:#555;padding:2px 6px;text-align:right}
td.cell{width:56px;height:22px;text-align:center;border:1px solid #fff}
td.cell.invalid{background:repeating-linear-gradient(45deg,#fbe3e6,#fbe3e6 4px,#fff 4px,#fff 8px);color:#b00020;font-weight:bold}
ul.problems li{color:#b00020}
svg text{font-size:11px;fill:#333}
.legend span{display:inline-block;width:14px;height:14px;vertical-align:middle;margin:0 4px}
</style></head><body>
<div id="report">
<h1>taskring trace</h1>
<p id="verdict"></p>
<h2>Effective µs per (rank, round)</h2>
<p class="legend">fast<span style="background:hsl(120,60%,80%)"></span><span style="background:hsl(60,70%,75%)"></span><span style="background:hsl(0,70%,75%)"></span>slow · <span style="background:#fbe3e6"></span>invalid (no value; named below)</p>
<div id="heat"></div>
<ul class="problems" id="problems"></ul>
<h2>Per-rank distribution (valid cells)</h2>
<div id="dist"></div>
<h2 id="swimtitle">Swimlane</h2>
<div id="swim"></div>
</div>
<script type="application/json" id="data">)html";

constexpr const char* kTail = R"html(</script>
<script>
(function () {
  const D = JSON.parse(document.getElementById('data').textContent);
  const el = (tag, attrs, text) => {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const svgEl = (tag, attrs) => {
    const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  };
  const fmt = v => v.toFixed(1);
  const valid = D.values.filter(v => v !== null);
  const lo = valid.length ? Math.min(...valid) : 0, hi = valid.length ? Math.max(...valid) : 1;
  const v = document.getElementById('verdict');
  v.className = D.status === 'OK' ? 'ok' : 'bad';
  v.textContent = 'trace: ' + D.status + ' \u2014 ' + D.valid_cells + '/' + D.values.length + ' cells valid, ' +
      D.ranks + ' rank(s) by ' + D.rank_source + ' \u00d7 ' + D.rounds + ' round(s), warmup ' + D.warmup + ', ' +
      D.records.parsed + ' records parsed, ' + D.records.torn + ' torn. Sources: ' + D.sources.join(', ');

  // Heat map.
  const why = new Map(D.missing.map(([i, w]) => [i, w]));
  const table = el('table', {class: 'heat'});
  const head = el('tr');
  head.appendChild(el('th', {}, 'rank \\ round'));
  for (let k = 0; k < D.rounds; ++k) head.appendChild(el('th', {}, String(k)));
  table.appendChild(head);
  let drawn = 0, invalid = 0;
  for (let r = 0; r < D.ranks; ++r) {
    const tr = el('tr');
    tr.appendChild(el('th', {}, D.rank_labels[r]));
    for (let k = 0; k < D.rounds; ++k) {
      const i = r * D.rounds + k, x = D.values[i];
      let td;
      if (x === null) {
        td = el('td', {class: 'cell invalid', title: D.rank_labels[r] + ' round ' + k + ': missing ' + why.get(i)}, '\u2715');
        ++invalid;
      } else {
        const f = hi > lo ? (x - lo) / (hi - lo) : 0;
        td = el('td', {class: 'cell valid', title: D.rank_labels[r] + ' round ' + k + ': ' + fmt(x) + ' \u00b5s',
                       style: 'background:hsl(' + Math.round(120 * (1 - f)) + ',65%,78%)'}, fmt(x));
      }
      tr.appendChild(td);
      ++drawn;
    }
    table.appendChild(tr);
  }
  document.getElementById('heat').appendChild(table);
  const ul = document.getElementById('problems');
  for (const p of D.problems) ul.appendChild(el('li', {}, 'invalid: ' + p));
  for (const w of D.warnings) ul.appendChild(el('li', {style: 'color:#8a6d00'}, 'warning: ' + w));

  // Per-rank distributions: min-max whisker, p25-p75 box, median, samples.
  const W = 640, rowH = 26, left = 170;
  const dist = svgEl('svg', {width: W + left + 140, height: rowH * D.ranks + 30});
  const x = u => left + (hi > lo ? (u - lo) / (hi - lo) : 0.5) * W;
  const q = (s, p) => { const t = (s.length - 1) * p, a = Math.floor(t); return s[a] + (s[Math.min(a + 1, s.length - 1)] - s[a]) * (t - a); };
  for (let r = 0; r < D.ranks; ++r) {
    const y = 10 + r * rowH + rowH / 2;
    const t = svgEl('text', {x: 0, y: y + 4});
    t.textContent = D.rank_labels[r];
    dist.appendChild(t);
    const s = D.values.slice(r * D.rounds, (r + 1) * D.rounds).filter(u => u !== null).sort((a, b) => a - b);
    if (!s.length) { const n = svgEl('text', {x: left, y: y + 4, fill: '#b00020'}); n.textContent = 'no valid cell'; dist.appendChild(n); continue; }
    dist.appendChild(svgEl('line', {x1: x(s[0]), x2: x(s[s.length - 1]), y1: y, y2: y, stroke: '#888'}));
    dist.appendChild(svgEl('rect', {class: 'box', x: x(q(s, .25)), y: y - 7, width: Math.max(1, x(q(s, .75)) - x(q(s, .25))), height: 14, fill: '#cfe3f7', stroke: '#3b73b9'}));
    dist.appendChild(svgEl('line', {x1: x(q(s, .5)), x2: x(q(s, .5)), y1: y - 8, y2: y + 8, stroke: '#174a8b', 'stroke-width': 2}));
    for (const u of s) dist.appendChild(svgEl('circle', {cx: x(u), cy: y, r: 2, fill: '#174a8b', 'fill-opacity': .5}));
    const m = svgEl('text', {x: left + W + 8, y: y + 4});
    m.textContent = 'median ' + fmt(q(s, .5));
    dist.appendChild(m);
  }
  const axis = svgEl('text', {x: left, y: rowH * D.ranks + 26});
  axis.textContent = fmt(lo) + ' \u00b5s \u2026 ' + fmt(hi) + ' \u00b5s';
  dist.appendChild(axis);
  document.getElementById('dist').appendChild(dist);

  // Swimlane of one round.
  const S = D.swimlane;
  document.getElementById('swimtitle').textContent = 'Swimlane of round ' + S.round + ' (\u00b5s from its first host start)';
  let end = 0;
  for (const l of S.lanes) for (const s of l.spans) end = Math.max(end, s.start_us + s.dur_us);
  const laneH = 20, sw = svgEl('svg', {width: W + left + 20, height: laneH * S.lanes.length + 30});
  const sx = u => left + (end > 0 ? u / end : 0) * W;
  const colour = l => l.startsWith('host') ? '#9ecae1' : ({ orchestrator: '#fdae6b', scheduler: '#a1d99b', device: '#bcbddc'})[l] || '#fc9272';
  S.lanes.forEach((l, i) => {
    const y = 10 + i * laneH;
    const t = svgEl('text', {x: 0, y: y + 13});
    t.textContent = 'rank ' + l.rank + ' ' + l.lane;
    sw.appendChild(t);
    for (const s of l.spans) {
      const rect = svgEl('rect', {class: 'span', x: sx(s.start_us), y: y + 2, width: Math.max(1, sx(s.start_us + s.dur_us) - sx(s.start_us)), height: laneH - 4,
                                  fill: colour(l.lane), stroke: '#555', 'stroke-width': .5});
      const tip = svgEl('title', {});
      tip.textContent = s.name + ': ' + fmt(s.dur_us) + ' \u00b5s at ' + fmt(s.start_us);
      rect.appendChild(tip);
      sw.appendChild(rect);
    }
  });
  const ax = svgEl('text', {x: left, y: laneH * S.lanes.length + 26});
  ax.textContent = '0 \u2026 ' + fmt(end) + ' \u00b5s';
  sw.appendChild(ax);
  document.getElementById('swim').appendChild(sw);

  const rep = document.getElementById('report');
  rep.setAttribute('data-cells', String(drawn));
  rep.setAttribute('data-invalid', String(invalid));
  rep.setAttribute('data-lanes', String(S.lanes.length));
})();
</script>
</body></html>
)html";

}  // namespace

Status write_html_report(const Trace& t, const std::vector<Invocation>& invs, const Matrix& m, const StageNames& names,
                         const std::string& path) {
  // ensure_ascii keeps the data pure ASCII; "</" is escaped so that no name
  // from the log can close the <script> element.
  std::string data = page_data(t, invs, m, names).dump(-1, ' ', true, json::error_handler_t::replace);
  std::string safe;
  safe.reserve(data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    if (data[i] == '<') {
      safe += "\\u003c";
    } else {
      safe.push_back(data[i]);
    }
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return unavailable("cannot write HTML report '" + path + "': " + std::strerror(errno));
  f << kHead << safe << kTail;
  f.close();
  if (!f) return unavailable("cannot write HTML report '" + path + "': write failed");
  return Status::Ok();
}

}  // namespace taskring::trace
