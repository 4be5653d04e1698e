#include "taskring/trace/parser.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "taskring/trace/percent.hpp"

namespace taskring::trace {
namespace {

constexpr std::string_view kStraceHead = "[STRACE]";
constexpr std::string_view kAnchorHead = "[CLOCK_ANCHOR]";

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// True when `p` (pointing at '[') starts `[mono_ns=<digits>]`.
bool is_mono_envelope(const char* p, const char* end) {
  constexpr std::string_view k = "[mono_ns=";
  if (static_cast<size_t>(end - p) < k.size() + 2 || std::memcmp(p, k.data(), k.size()) != 0) return false;
  const char* q = p + k.size();
  if (!is_digit(*q)) return false;
  // At most 20 digits (a u64): bounds the look-ahead a boundary needs.
  const char* stop = static_cast<size_t>(end - q) > 21 ? q + 21 : end;
  while (q < stop && is_digit(*q)) ++q;
  return q < stop && *q == ']';
}

// True when `p` starts the older wall-clock prefix `[YYYY-MM-DD HH:MM:SS[.f+]]`.
bool is_wall_envelope(const char* p, const char* end) {
  constexpr std::string_view shape = "[dddd-dd-dd dd:dd:dd";
  if (static_cast<size_t>(end - p) < shape.size() + 1) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 'd' ? !is_digit(p[i]) : p[i] != shape[i]) return false;
  }
  const char* q = p + shape.size();
  if (*q == '.') {
    ++q;
    const char* stop = static_cast<size_t>(end - q) > 13 ? q + 13 : end;  // at most 12 fraction digits
    while (q < stop && is_digit(*q)) ++q;
    return q < stop && *q == ']';
  }
  return q < end && *q == ']';
}

// True when `p` (a '[') starts something that ends the record before it.
bool is_boundary(const char* p, const char* end) {
  size_t rem = static_cast<size_t>(end - p);
  if (rem >= kStraceHead.size() && std::memcmp(p, kStraceHead.data(), kStraceHead.size()) == 0) return true;
  if (rem >= kAnchorHead.size() && std::memcmp(p, kAnchorHead.data(), kAnchorHead.size()) == 0) return true;
  return is_mono_envelope(p, end) || is_wall_envelope(p, end);
}

// A cursor over one record body. Fields are separated by one or more spaces.
struct Fields {
  std::string_view s;

  // Reads ` key=<token>`; the token runs to the next space or the end.
  bool take(std::string_view key, std::string_view& token) {
    size_t i = 0;
    while (i < s.size() && s[i] == ' ') ++i;
    if (s.size() - i < key.size() + 1 || s.compare(i, key.size(), key) != 0 || s[i + key.size()] != '=') {
      return false;
    }
    i += key.size() + 1;
    size_t end = s.find(' ', i);
    if (end == std::string_view::npos) end = s.size();
    token = s.substr(i, end - i);
    s.remove_prefix(end);
    return !token.empty();
  }
};

template <typename T>
bool to_int(std::string_view tok, T& out, int base = 10) {
  if (tok.empty()) return false;
  auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), out, base);
  return ec == std::errc() && p == tok.data() + tok.size();
}

bool to_hex_u64(std::string_view tok, uint64_t& out) {
  if (tok.size() > 2 && tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X')) tok.remove_prefix(2);
  return to_int(tok, out, 16);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\t')) s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

}  // namespace

struct TraceParser::Impl {
  Trace trace;
  // Encoded name -> name id: names repeat, so each is decoded once.
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> name_ids;
  std::map<int64_t, ClockAnchor> anchors;
  std::set<int64_t> span_pids;
  int64_t last_pid = 0;  // spans of one pid come in runs; skip the set lookup
  bool have_last_pid = false;

  // Streaming state of the current source. `view` is what process() scans
  // now (the caller's chunk or `carry`); `view_base` is its offset in the
  // source. Line numbers for diagnostics are counted lazily up to `line_pos`
  // (into `view`), since diagnostics arrive in offset order.
  std::string carry;  // unconsumed tail of the previous chunks, < kLookahead bytes
  std::string_view view;
  uint64_t view_base = 0;
  size_t line_pos = 0;
  uint64_t line_no = 1;
  char last_byte = '\n';
  uint64_t retained_bytes = 0;

  // Bytes a head needs after it before it can be parsed without the next
  // chunk: the longest record plus the longest boundary after it.
  static constexpr size_t kLookahead = kAnchorHead.size() + Trace::kMaxRecordBytes + 64;

  uint64_t abs_offset(const char* p) const { return view_base + static_cast<uint64_t>(p - view.data()); }

  std::string where(uint64_t offset) {
    const size_t rel = static_cast<size_t>(offset - view_base);
    line_no += static_cast<uint64_t>(std::count(view.data() + line_pos, view.data() + rel, '\n'));
    line_pos = rel;
    return trace.sources.back() + ":" + std::to_string(line_no);
  }

  // Names a piece of hostile input in a message without copying all of it.
  static std::string excerpt(std::string_view s) {
    constexpr size_t kMax = 64;
    return s.size() <= kMax ? std::string(s) : std::string(s.substr(0, kMax)) + "...";
  }

  void diag(Diagnostic::Kind kind, uint64_t offset, std::string message) {
    if (trace.diagnostics.size() >= Trace::kMaxDiagnostics) {
      ++trace.diagnostics_dropped;
      return;
    }
    trace.diagnostics.push_back({kind, where(offset), std::move(message)});
  }

  // End of the record whose body starts at `body`: the first boundary or the
  // end of the physical line, searched over at most kMaxRecordBytes so that
  // every byte is looked at a bounded number of times (linear parsing however
  // long the line). Sets `overlong` when neither was found within the cap.
  const char* record_end(const char* body, const char* end, bool& overlong) {
    const char* limit = static_cast<size_t>(end - body) > Trace::kMaxRecordBytes ? body + Trace::kMaxRecordBytes : end;
    const char* nl = static_cast<const char*>(std::memchr(body, '\n', static_cast<size_t>(limit - body)));
    const char* line_end = nl ? nl : limit;
    overlong = !nl && limit != end;
    const char* q = body;
    while (true) {
      q = static_cast<const char*>(std::memchr(q, '[', static_cast<size_t>(line_end - q)));
      if (!q) return line_end;
      if (is_boundary(q, end)) {
        overlong = false;
        return q;
      }
      ++q;
    }
  }

  uint32_t intern(std::string_view encoded, uint64_t offset) {
    auto it = name_ids.find(encoded);
    if (it != name_ids.end()) return it->second;
    std::string decoded;
    size_t bad = percent_decode(encoded, decoded);
    if (bad) {
      trace.counts.bad_escapes += bad;
      diag(Diagnostic::Kind::kBadEscape, offset, "malformed %XX escape in span name '" + excerpt(encoded) + "'");
    }
    auto id = static_cast<uint32_t>(trace.names.size());
    trace.names.push_back(std::move(decoded));
    name_ids.emplace(std::string(encoded), id);
    return id;
  }

  // Parses the [STRACE] record at `p`; returns where scanning resumes.
  const char* parse_strace(const char* p, const char* end) {
    ++trace.counts.heads;
    const uint64_t offset = abs_offset(p);
    const char* body = p + kStraceHead.size();
    bool overlong = false;
    const char* rend = record_end(body, end, overlong);
    if (overlong) {
      return torn(offset, rend,
                  "no end within " + std::to_string(Trace::kMaxRecordBytes) + " bytes (records are at most that long)");
    }
    Fields f{trim(std::string_view(body, static_cast<size_t>(rend - body)))};
    std::string_view tok;
    if (!f.take("v", tok)) return torn(offset, rend, "no 'v=' after [STRACE]");
    if (tok != "1") {
      uint64_t v = 0;
      if (!to_int(tok, v)) return torn(offset, rend, "bad version 'v=" + excerpt(tok) + "'");
      ++trace.counts.unknown_version;
      diag(Diagnostic::Kind::kUnknownVersion, offset, "[STRACE] v=" + excerpt(tok) + " is not supported; skipped");
      return rend;
    }
    Span s;
    s.source = static_cast<uint32_t>(trace.sources.size() - 1);
    s.offset = offset;
    if (!f.take("pid", tok) || !to_int(tok, s.pid)) return torn(offset, rend, "missing or bad 'pid='");
    if (!f.take("tid", tok) || !to_int(tok, s.tid)) return torn(offset, rend, "missing or bad 'tid='");
    if (!f.take("inv", tok) || !to_int(tok, s.inv)) return torn(offset, rend, "missing or bad 'inv='");
    if (!f.take("hid", tok) || !to_hex_u64(tok, s.hid)) return torn(offset, rend, "missing or bad 'hid='");
    if (!f.take("depth", tok) || !to_int(tok, s.depth) || s.depth < 0) {
      return torn(offset, rend, "missing or bad 'depth='");
    }
    std::string_view name;
    if (!f.take("name", name)) return torn(offset, rend, "missing 'name='");
    if (!f.take("ts", tok) || !to_int(tok, s.ts_ns)) return torn(offset, rend, "missing or bad 'ts='");
    if (!f.take("dur", tok) || !to_int(tok, s.dur_ns)) return torn(offset, rend, "missing or bad 'dur='");
    if (s.dur_ns < 0) return torn(offset, rend, "negative 'dur='");
    // end_ns() must be representable: every later computation relies on it.
    if (int64_t e; __builtin_add_overflow(s.ts_ns, s.dur_ns, &e))
      return torn(offset, rend, "'ts' + 'dur' overflows int64");
    if (!f.s.empty() && f.s.front() != ' ') return torn(offset, rend, "junk after 'dur='");
    s.name_truncated = name.back() == '~';
    s.name_id = intern(name, offset);
    std::string_view attrs = trim(f.s);
    if (!attrs.empty()) {
      s.attrs_truncated = attrs.back() == '~';
      size_t bad = percent_decode(attrs, s.attrs);
      if (bad) {
        trace.counts.bad_escapes += bad;
        diag(Diagnostic::Kind::kBadEscape, offset,
             "malformed %XX escape in attrs of span '" + excerpt(trace.names[s.name_id]) + "'");
      }
      auto clk = find_attr(s.attrs, "clk");
      s.device_clock = clk && *clk == "dev";
    }
    if (trace.spans.size() >= Trace::kMaxSpans ||
        retained_bytes + s.attrs.size() + sizeof(Span) > Trace::kMaxRetainedBytes) {
      ++trace.counts.over_limit;
      return rend;
    }
    retained_bytes += s.attrs.size() + sizeof(Span);
    ++trace.counts.parsed;
    if (!have_last_pid || last_pid != s.pid) {
      span_pids.insert(s.pid);
      last_pid = s.pid;
      have_last_pid = true;
    }
    trace.spans.push_back(std::move(s));
    return rend;
  }

  const char* torn(uint64_t offset, const char* rend, std::string why) {
    ++trace.counts.torn;
    diag(Diagnostic::Kind::kTornRecord, offset, "torn [STRACE] record: " + why);
    return rend;
  }

  const char* parse_anchor(const char* p, const char* end) {
    ++trace.counts.anchor_heads;
    const uint64_t offset = abs_offset(p);
    const char* body = p + kAnchorHead.size();
    bool overlong = false;
    const char* rend = record_end(body, end, overlong);
    Fields f{trim(std::string_view(body, static_cast<size_t>(rend - body)))};
    std::string_view tok;
    ClockAnchor a;
    bool ok = !overlong && f.take("v", tok);
    if (ok && tok != "1") {
      ++trace.counts.torn_anchors;
      diag(Diagnostic::Kind::kTornAnchor, offset, "[CLOCK_ANCHOR] v=" + excerpt(tok) + " is not supported; skipped");
      return rend;
    }
    ok = ok && f.take("pid", tok) && to_int(tok, a.pid);
    ok = ok && f.take("mono_ns", tok) && to_int(tok, a.mono_ns);
    ok = ok && f.take("wall_ns", tok) && to_int(tok, a.wall_ns);
    if (!ok || !f.s.empty()) {
      ++trace.counts.torn_anchors;
      diag(Diagnostic::Kind::kTornAnchor, offset, "incomplete [CLOCK_ANCHOR] record; ignored");
      return rend;
    }
    ++trace.counts.anchors;
    auto [it, inserted] = anchors.insert_or_assign(a.pid, a);
    if (!inserted) {
      ++trace.counts.duplicate_anchors;
      diag(Diagnostic::Kind::kDuplicateAnchor, offset,
           "second [CLOCK_ANCHOR] for pid " + std::to_string(a.pid) + "; the last one is used");
    }
    return rend;
  }

  // Parses the records of `v` (at `base` in the source) that can be parsed
  // without more input (all of them when `final`); returns the bytes consumed.
  size_t process(std::string_view v, uint64_t base, bool final) {
    view = v;
    view_base = base;
    line_pos = 0;
    const char* p = v.data();
    const char* end = v.data() + v.size();
    while (p < end) {
      p = static_cast<const char*>(std::memchr(p, '[', static_cast<size_t>(end - p)));
      if (!p) {
        p = end;
        break;
      }
      size_t rem = static_cast<size_t>(end - p);
      if (!final && rem < kLookahead) break;  // the record may go on in the next chunk
      if (rem >= kStraceHead.size() && p[1] == 'S' && std::memcmp(p, kStraceHead.data(), kStraceHead.size()) == 0) {
        p = parse_strace(p, end);
      } else if (rem >= kAnchorHead.size() && p[1] == 'C' &&
                 std::memcmp(p, kAnchorHead.data(), kAnchorHead.size()) == 0) {
        p = parse_anchor(p, end);
      } else {
        ++p;
      }
    }
    const size_t consumed = static_cast<size_t>(p - v.data());
    line_no += static_cast<uint64_t>(std::count(v.data() + line_pos, p, '\n'));
    line_pos = 0;
    return consumed;
  }

  void begin_source(std::string_view source) {
    trace.sources.emplace_back(source);
    carry.clear();
    view_base = 0;
    line_no = 1;
    last_byte = '\n';
  }

  void feed_chunk(std::string_view d) {
    if (d.empty()) return;
    trace.counts.bytes += d.size();
    trace.counts.lines += static_cast<uint64_t>(std::count(d.begin(), d.end(), '\n'));
    last_byte = d.back();
    if (carry.empty()) {
      // Scan the caller's bytes in place; keep only the unparsed tail.
      const uint64_t base = view_base;
      size_t consumed = process(d, base, false);
      carry.assign(d.substr(consumed));
      view_base = base + consumed;
    } else {
      carry.append(d);
      const uint64_t base = view_base;
      size_t consumed = process(carry, base, false);
      carry.erase(0, consumed);
      view_base = base + consumed;
    }
    view = {};
  }

  void end_source() {
    if (!carry.empty()) process(carry, view_base, true);
    if (last_byte != '\n') ++trace.counts.lines;
    carry.clear();
    carry.shrink_to_fit();
    view = {};
  }

  Trace finish() {
    for (int64_t pid : span_pids) {
      if (anchors.count(pid)) continue;
      ++trace.counts.missing_anchors;
      if (trace.diagnostics.size() < Trace::kMaxDiagnostics) {
        trace.diagnostics.push_back({Diagnostic::Kind::kMissingAnchor, "pid " + std::to_string(pid),
                                     "no [CLOCK_ANCHOR] for pid " + std::to_string(pid) + "; wall times unknown"});
      } else {
        ++trace.diagnostics_dropped;
      }
    }
    for (auto& [pid, a] : anchors) trace.anchors.push_back(a);
    Trace out = std::move(trace);
    trace = Trace();
    name_ids.clear();
    anchors.clear();
    span_pids.clear();
    have_last_pid = false;
    retained_bytes = 0;
    return out;
  }
};

TraceParser::TraceParser() : impl_(new Impl) {}
TraceParser::~TraceParser() { delete impl_; }
void TraceParser::begin_source(std::string_view source) { impl_->begin_source(source); }
void TraceParser::feed_chunk(std::string_view bytes) { impl_->feed_chunk(bytes); }
void TraceParser::end_source() { impl_->end_source(); }
void TraceParser::feed(std::string_view data, std::string_view source) {
  impl_->begin_source(source);
  // In slices, so that each pass over the bytes (line count, scan) stays in cache.
  constexpr size_t kSlice = size_t{1} << 20;
  for (size_t i = 0; i < data.size(); i += kSlice) impl_->feed_chunk(data.substr(i, kSlice));
  impl_->end_source();
}
Trace TraceParser::finish() { return impl_->finish(); }

Trace parse_trace(std::string_view data, std::string_view source) {
  TraceParser p;
  p.feed(data, source);
  return p.finish();
}

}  // namespace taskring::trace
