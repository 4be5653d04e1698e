// libFuzzer target for `taskring trace`: any byte string must parse without
// crashing or undefined behaviour, the record accounting must balance, a
// chunked feed must give what a whole feed gives, and the analysis and every
// view must run on the result (bounded work, no NUL in the text report).
// Options of the matrix come from the first input bytes, limits included.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "taskring/trace/invocations.hpp"
#include "taskring/trace/matrix.hpp"
#include "taskring/trace/parser.hpp"
#include "taskring/trace/report.hpp"

namespace {

using namespace taskring::trace;

void check(bool ok) {
  if (!ok) std::abort();
}

// A small count, or just beyond a limit (the limits themselves are valid but
// make each run build a large matrix; the unit tests cover them).
int pick(uint8_t b, int limit) {
  switch (b % 8) {
    case 0: return 0;
    case 1: return limit + 1;
    case 2: return 1 << 30;
    case 3: return -1;
    default: return b % 5 + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  Trace t = parse_trace(in, "fuzz");
  const auto& c = t.counts;
  check(c.heads == c.parsed + c.unknown_version + c.torn);
  check(t.spans.size() == c.parsed);
  for (const auto& s : t.spans) check(s.name_id < t.names.size() && s.depth >= 0 && s.dur_ns >= 0);

  // The same bytes in chunks of a size the input chooses.
  const size_t chunk = size ? 1 + data[0] % 97 : 1;
  TraceParser p;
  p.begin_source("fuzz");
  for (size_t i = 0; i < size; i += chunk) p.feed_chunk(in.substr(i, chunk));
  p.end_source();
  Trace u = p.finish();
  check(u.counts.heads == c.heads && u.counts.parsed == c.parsed && u.counts.torn == c.torn &&
        u.counts.lines == c.lines && u.counts.anchors == c.anchors && u.spans.size() == t.spans.size());
  for (size_t i = 0; i < u.spans.size(); ++i) check(u.spans[i].offset == t.spans[i].offset);

  StageNames names;
  auto invs = group_invocations(t, names);
  MatrixOptions o;
  if (size >= 5) {
    if (data[1] % 2) o.ranks = pick(data[1] >> 1, kMaxRanks);
    if (data[2] % 2) o.rounds = pick(data[2] >> 1, kMaxRounds);
    if (data[3] % 2) o.dispatches_per_round = pick(data[3] >> 1, kMaxDispatchesPerRound);
    o.warmup = data[4] % 4 == 3 ? kMaxWarmup : data[4] % 4;
    o.rank_by = static_cast<RankBy>(data[4] / 4 % 3);
  }
  auto m = build_matrix(t, invs, names, o);
  if (!m.ok()) return 0;
  check(m->cells.size() == static_cast<size_t>(m->ranks) * static_cast<size_t>(m->rounds));
  std::string text = render_callable_summary(t, invs, names) + render_tree(t, invs, names) +
                     render_rounds_table(t, invs, names) + render_matrix(t, *m);
  check(text.find('\0') == std::string::npos);
  check(text.find("trace: ") != std::string::npos);
  check(!render_json(t, *m).empty());
  return 0;
}
