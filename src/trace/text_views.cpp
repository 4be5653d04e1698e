#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "format.hpp"
#include "taskring/trace/report.hpp"
#include "taskring/trace/stats.hpp"

namespace taskring::trace {
namespace {

using detail::fmt1;
using detail::kMissing;
using detail::rpad;

struct Bucket {
  uint64_t hid = 0;
  std::vector<const Invocation*> invs;
};

// Invocations bucketed by callable hash, busiest first (ties by hid).
std::vector<Bucket> buckets(const std::vector<Invocation>& invs) {
  std::map<uint64_t, Bucket> m;
  for (const Invocation& i : invs) {
    if (i.prewarm) continue;
    Bucket& b = m[i.hid];
    b.hid = i.hid;
    b.invs.push_back(&i);
  }
  std::vector<Bucket> out;
  for (auto& [h, b] : m) {
    std::sort(b.invs.begin(), b.invs.end(),
              [](auto* a, auto* c) { return a->inv != c->inv ? a->inv < c->inv : a->pid < c->pid; });
    out.push_back(std::move(b));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Bucket& a, const Bucket& b) { return a.invs.size() > b.invs.size(); });
  return out;
}

std::string label(const std::vector<Bucket>& bs, size_t i) {
  if (i == 0 && bs[0].invs.size() > 1) return "decode";
  if (bs[i].invs.size() == 1) return "prefill";
  return "";
}

// Per name (sorted, so parents precede children), the earliest-ts duration
// (µs) of each invocation that has it.
std::map<std::string, std::vector<double>> stage_samples(const Trace& t, const Bucket& b) {
  std::map<std::string, std::vector<double>> out;
  std::map<uint32_t, const Span*> first;
  for (const Invocation* inv : b.invs) {
    first.clear();
    for (uint32_t si : inv->spans) {
      const Span& s = t.spans[si];
      auto [it, ins] = first.try_emplace(s.name_id, &s);
      if (!ins && s.ts_ns < it->second->ts_ns) it->second = &s;
    }
    for (auto& [id, s] : first) out[t.names[id]].push_back(static_cast<double>(s->dur_ns) / 1000.0);
  }
  return out;
}

size_t dots(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '.')); }

std::vector<double> effective_samples(const Trace& t, const Bucket& b) {
  std::vector<double> v;
  for (const Invocation* inv : b.invs) {
    std::vector<Window> w;
    if (inv->orch >= 0) w.push_back({t.spans[inv->orch].ts_ns, t.spans[inv->orch].end_ns()});
    if (inv->sched >= 0) w.push_back({t.spans[inv->sched].ts_ns, t.spans[inv->sched].end_ns()});
    if (w.size() == 2) v.push_back(static_cast<double>(union_length(w)) / 1000.0);
  }
  return v;
}

}  // namespace

std::string render_callable_summary(const Trace& t, const std::vector<Invocation>& invs, const StageNames&) {
  if (t.counts.heads == 0) return "No [STRACE] markers found.\n";
  std::string out;
  auto bs = buckets(invs);
  for (size_t i = 0; i < bs.size(); ++i) {
    std::string lb = label(bs, i);
    out += "callable hid=" + detail::hex16(bs[i].hid) + (lb.empty() ? "" : " (" + lb + ")") + " \xE2\x80\x94 " +
           std::to_string(bs[i].invs.size()) + " invocation(s)\n";
    auto samples = stage_samples(t, bs[i]);
    size_t base = samples.empty() ? 0 : dots(samples.begin()->first);
    for (const auto& [name, v] : samples) base = std::min(base, dots(name));
    for (const auto& [name, v] : samples) {
      Summary s = summarize(v);
      out += std::string(2 + 2 * (dots(name) - base), ' ') + detail::printable(name) + ": mean " + fmt1(s.mean) +
             " us  min " + fmt1(s.min) + "  max " + fmt1(s.max) + "  (n=" + std::to_string(s.n) + ")\n";
    }
  }
  return out;
}

std::string render_tree(const Trace& t, const std::vector<Invocation>& invs, const StageNames& names) {
  if (t.counts.heads == 0) return "No [STRACE] markers found.\n";
  std::string out;
  auto bs = buckets(invs);
  for (size_t i = 0; i < bs.size(); ++i) {
    out += "callable hid=" + detail::hex16(bs[i].hid) + " \xE2\x80\x94 " + std::to_string(bs[i].invs.size()) +
           " invocation(s), medians\n";
    auto samples = stage_samples(t, bs[i]);
    size_t base = SIZE_MAX;
    for (const auto& [name, v] : samples) base = std::min(base, dots(name));
    for (const auto& [name, v] : samples) {
      std::string indent(2 + 2 * (dots(name) - base), ' ');
      std::string leaf = name.substr(name.rfind('.') == std::string::npos ? 0 : name.rfind('.') + 1);
      out += indent + detail::printable(dots(name) == base ? name : leaf) + "  " + fmt1(summarize(v).median) +
             " us  (n=" + std::to_string(v.size()) + ")\n";
      if (has_dotted_suffix(name, names.device_wall)) {
        auto eff = effective_samples(t, bs[i]);
        std::vector<double> o, s;
        for (const auto& [n2, v2] : samples) {
          if (has_dotted_suffix(n2, names.orch)) o = v2;
          if (has_dotted_suffix(n2, names.sched)) s = v2;
        }
        out += indent + "  Effective [dev]  " + (eff.empty() ? std::string(kMissing) : fmt1(summarize(eff).median)) +
               " us = orch " + (o.empty() ? std::string(kMissing) : fmt1(summarize(o).median)) +
               " \xE2\x88\xA5 sched " + (s.empty() ? std::string(kMissing) : fmt1(summarize(s).median)) +
               " (concurrent, union)\n";
      }
    }
  }
  return out;
}

std::string render_rounds_table(const Trace& t, const std::vector<Invocation>& invs, const StageNames&) {
  auto bs = buckets(invs);
  if (bs.empty()) return "No [STRACE] markers found.\n";
  const Bucket& b = bs[0];
  const size_t w = 12;
  struct Col {
    const char* title;
    std::vector<std::optional<double>> v;
  };
  Col cols[5] = {{"Host (us)", {}}, {"Device (us)", {}}, {"Effective (us)", {}}, {"Orch (us)", {}}, {"Sched (us)", {}}};
  auto dur = [&](int64_t i) -> std::optional<double> {
    if (i < 0) return std::nullopt;
    return static_cast<double>(t.spans[i].dur_ns) / 1000.0;
  };
  for (const Invocation* inv : b.invs) {
    cols[0].v.push_back(dur(inv->root));
    cols[1].v.push_back(dur(inv->device_wall));
    std::optional<double> eff;
    if (inv->orch >= 0 && inv->sched >= 0) {
      eff = static_cast<double>(union_length({{t.spans[inv->orch].ts_ns, t.spans[inv->orch].end_ns()},
                                              {t.spans[inv->sched].ts_ns, t.spans[inv->sched].end_ns()}})) /
            1000.0;
    }
    cols[2].v.push_back(eff);
    cols[3].v.push_back(dur(inv->orch));
    cols[4].v.push_back(dur(inv->sched));
  }
  // Columns other than Host appear only when some row has them (an HBG run has no orch/sched).
  std::vector<const Col*> shown = {&cols[0]};
  for (int c = 1; c < 5; ++c) {
    if (std::any_of(cols[c].v.begin(), cols[c].v.end(), [](auto& x) { return x.has_value(); }))
      shown.push_back(&cols[c]);
  }
  std::string out = "callable hid=" + detail::hex16(b.hid) + ", " + std::to_string(b.invs.size()) +
                    " dispatch(es) in inv order (" + std::string(kMissing) + " = span missing)\n";
  out += rpad("Round", 7);
  for (auto* c : shown) out += "  " + rpad(c->title, w);
  out += "\n" + std::string(7 + shown.size() * (w + 2), '-') + "\n";
  for (size_t r = 0; r < b.invs.size(); ++r) {
    out += rpad(std::to_string(r), 7);
    for (auto* c : shown) out += "  " + rpad(c->v[r] ? fmt1(*c->v[r]) : std::string(kMissing), w);
    out += "\n";
  }
  std::string avg = " ", trimmed = " ";
  bool any_trim = false;
  for (size_t i = 0; i < shown.size(); ++i) {
    std::vector<double> v;
    for (auto& x : shown[i]->v)
      if (x) v.push_back(*x);
    Summary s = summarize(v);
    std::string title(shown[i]->title);
    title = title.substr(0, title.find(" ("));
    std::string count = " [" + std::to_string(s.n) + "/" + std::to_string(b.invs.size()) + "]";
    avg += std::string(i ? "  |  " : " ") + "Avg " + title + ": " +
           (s.n ? fmt1(s.mean) + " us" : std::string(kMissing)) + count;
    if (s.has_trimmed) {
      any_trim = true;
      trimmed += std::string(i ? "  |  " : " ") + "Trimmed Avg " + title + ": " + fmt1(s.trimmed_mean) + " us";
    }
  }
  out += avg + "  (" + std::to_string(b.invs.size()) + " rounds)\n";
  if (any_trim) out += trimmed + "  (dropped 10% low + 10% high)\n";
  return out;
}

}  // namespace taskring::trace
