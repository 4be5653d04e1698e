// The records `taskring trace` reads out of captured logs: [STRACE] v=1 spans
// and [CLOCK_ANCHOR] v=1 records, plus the counters and diagnostics a parse
// produces. The record grammar is described in docs/trace.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace taskring::trace {

// One [STRACE] v=1 record, decoded. Times are nanoseconds in the clock domain
// of the producer: CLOCK_MONOTONIC for host spans (comparable across processes
// on one host), a per-invocation device origin for spans with `clk=dev`.
struct Span {
  int64_t pid = 0;
  int64_t tid = 0;
  uint64_t inv = 0;
  uint64_t hid = 0;
  int32_t depth = 0;
  uint32_t name_id = 0;  // index into Trace::names
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  std::string attrs;             // percent-decoded `k=v ...`, surrounding spaces stripped
  uint32_t source = 0;           // index into Trace::sources
  uint64_t offset = 0;           // byte offset of the record's `[STRACE]` in its source
  bool name_truncated = false;   // encoded name ended with the `~` marker
  bool attrs_truncated = false;  // encoded attrs ended with the `~` marker
  bool device_clock = false;     // attrs carry `clk=dev`

  int64_t end_ns() const { return ts_ns + dur_ns; }
};

// One [CLOCK_ANCHOR] v=1 record: at `mono_ns` on CLOCK_MONOTONIC the wall
// clock of process `pid` read `wall_ns`.
struct ClockAnchor {
  int64_t pid = 0;
  int64_t mono_ns = 0;
  int64_t wall_ns = 0;
};

// What a parse could not take at face value. `where` is "<source>:<line>".
struct Diagnostic {
  enum class Kind {
    kTornRecord,       // a [STRACE] head whose record could not be parsed
    kUnknownVersion,   // a [STRACE] v=N with N != 1; skipped
    kBadEscape,        // a `%` not followed by two hex digits; kept literally
    kTornAnchor,       // a [CLOCK_ANCHOR] head that is not a complete record
    kDuplicateAnchor,  // a second anchor for one pid; the last one wins
    kMissingAnchor,    // a pid with spans but no anchor; no wall time for it
  };
  Kind kind;
  std::string where;
  std::string message;
};

std::string_view diagnostic_kind_name(Diagnostic::Kind kind);

// Record accounting. Every `[STRACE]` occurrence is a head; a head is either
// parsed, of an unknown version, or torn: heads == parsed + unknown_version + torn.
struct ParseCounts {
  uint64_t bytes = 0;
  uint64_t lines = 0;  // physical lines; a last line without '\n' counts
  uint64_t heads = 0;
  uint64_t parsed = 0;
  uint64_t unknown_version = 0;
  uint64_t torn = 0;
  uint64_t bad_escapes = 0;
  uint64_t anchor_heads = 0;
  uint64_t anchors = 0;  // complete v=1 anchors, duplicates included
  uint64_t torn_anchors = 0;
  uint64_t duplicate_anchors = 0;
  uint64_t missing_anchors = 0;  // pids with spans and no anchor
  // Records that parsed but were not kept because Trace::kMaxSpans or
  // Trace::kMaxRetainedBytes was reached; parse_files() refuses such a log.
  uint64_t over_limit = 0;
};

// Everything parsed out of one or more log sources.
struct Trace {
  std::vector<std::string> sources;  // names given to the parser, in feed order
  std::vector<std::string> names;    // decoded span names, interned
  std::vector<Span> spans;           // in input order
  std::vector<ClockAnchor> anchors;  // one per pid (the last seen), sorted by pid
  ParseCounts counts;
  // At most kMaxDiagnostics are kept; the rest are only counted here.
  std::vector<Diagnostic> diagnostics;
  uint64_t diagnostics_dropped = 0;
  static constexpr size_t kMaxDiagnostics = 1000;

  // Limits that bound the memory a parse can take whatever the input.
  // A record (after its `[STRACE]`) longer than kMaxRecordBytes is torn: the
  // producers' records are at most 512 bytes. Records beyond kMaxSpans, or
  // beyond kMaxRetainedBytes of kept spans (sizeof(Span) + decoded attrs
  // each), are counted in counts.over_limit and not kept.
  static constexpr size_t kMaxRecordBytes = 4096;
  static constexpr uint64_t kMaxSpans = uint64_t{1} << 23;
  static constexpr uint64_t kMaxRetainedBytes = uint64_t{1} << 31;

  const std::string& name(const Span& s) const { return names[s.name_id]; }
  // The anchor of `pid`, if one was seen.
  const ClockAnchor* anchor(int64_t pid) const;
};

// Returns the value of attribute `key` in a decoded `k=v ...` string, or
// nullopt when absent. The first occurrence wins.
std::optional<std::string_view> find_attr(std::string_view attrs, std::string_view key);

}  // namespace taskring::trace
