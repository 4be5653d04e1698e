// Parser for captured taskring / upstream logs holding [STRACE] v=1 records.
//
// Rules (docs/trace.md has the full grammar):
//  * every record on every physical line is taken, wherever it starts;
//  * a record ends at the next log envelope (`[mono_ns=N]` or the older
//    wall-clock `[YYYY-MM-DD HH:MM:SS.ffffff]`), the next `[STRACE]`, the next
//    `[CLOCK_ANCHOR]` or the end of the line; a trailing '\r' is dropped;
//  * each `[STRACE]` is a head; a head that does not parse is torn, one with
//    `v=` other than 1 is counted and skipped;
//  * names and attrs are percent-decoded;
//  * a `[CLOCK_ANCHOR] v=1` must be complete and alone up to its end; the last
//    anchor of a pid wins and duplicates are reported.
// Parsing never fails: bad input becomes counters and diagnostics.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "taskring/base/expected.hpp"
#include "taskring/trace/span.hpp"

namespace taskring::trace {

class TraceParser {
 public:
  TraceParser();
  ~TraceParser();
  TraceParser(const TraceParser&) = delete;
  TraceParser& operator=(const TraceParser&) = delete;

  // Parses one whole source (a file's content). `source` names it in
  // diagnostics. Records never continue across sources.
  void feed(std::string_view data, std::string_view source);

  // The same, in pieces: begin_source, any number of feed_chunk calls with
  // consecutive bytes of the source, then end_source. Records may straddle
  // chunks. The parser keeps less than 5 KiB of a source between chunks, so
  // a file is parsed in memory bounded by the chunk size plus the kept spans
  // (Trace::kMaxSpans, Trace::kMaxRetainedBytes). Work is linear in the
  // input size whatever its line structure.
  void begin_source(std::string_view source);
  void feed_chunk(std::string_view bytes);
  void end_source();

  // Completes the trace (anchors, missing-anchor diagnostics) and returns it.
  // The parser is empty afterwards and may be fed again.
  Trace finish();

 private:
  struct Impl;
  Impl* impl_;
};

// Parses a single in-memory log.
Trace parse_trace(std::string_view data, std::string_view source = "<input>");

// Reads and parses the files at `paths` ("-" is standard input), streaming
// each in 1 MiB chunks. Fails with NOT_FOUND / UNAVAILABLE naming the file
// that could not be read, and with RESOURCE_EXHAUSTED when the logs hold more
// records than the limits in Trace allow.
Expected<Trace> parse_files(const std::vector<std::string>& paths);

}  // namespace taskring::trace
