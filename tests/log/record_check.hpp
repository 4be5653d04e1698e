// Stress-test payloads and their checker: every line must be one intact
// record, and every (writer, sequence) must appear exactly once.
#pragma once

#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "log_test_util.hpp"
#include "taskring/log/strace.hpp"

namespace taskring::log::testing {

// A deterministic pad, so a torn or spliced record cannot pass for intact.
// Most are short; every 50th is ~2 KB (still below PIPE_BUF).
inline std::string log_pad(int writer, int seq) {
  size_t len =
      seq % 50 == 7 ? 1900 + static_cast<size_t>(writer) : 10 + static_cast<size_t>(writer * 31 + seq * 7) % 190;
  return std::string(len, static_cast<char>('a' + (writer + seq) % 26));
}
inline std::string span_pad(int writer, int seq) {
  return std::string(1 + static_cast<size_t>(writer * 13 + seq) % 150,
                     static_cast<char>('A' + (writer * 7 + seq) % 26));
}

inline void write_log_records(int writer, int count) {
  for (int seq = 0; seq < count; ++seq) {
    TR_LOG_TIMING("w=%d seq=%d pad=%s", writer, seq, log_pad(writer, seq).c_str());
  }
}

inline void write_span_records(int writer, int count) {
  for (int seq = 0; seq < count; ++seq) {
    strace::emit_span("mp.span", seq, writer, static_cast<uint64_t>(seq) + 1, 0xabcdef, 0,
                      strace::Attrs{{"w", writer}, {"seq", seq}, {"pad", span_pad(writer, seq)}});
  }
}

struct CheckResult {
  std::string error;  // empty when every check passed
  int records = 0;
  std::map<int64_t, int> anchors_by_pid;
};

// `pids[w]` is the pid writer w must report (spans), or empty to skip.
inline CheckResult check_records(const std::string& text, int writers, int per_writer, bool spans,
                                 const std::vector<int>& pids = {}) {
  CheckResult r;
  std::vector<std::vector<int>> seen(static_cast<size_t>(writers), std::vector<int>(static_cast<size_t>(per_writer)));
  bool complete = false;
  std::vector<std::string> lines = split_lines(text, &complete);
  auto fail = [&r](const std::string& why, const std::string& line) {
    if (r.error.empty()) r.error = why + ": '" + line.substr(0, 300) + "'";
  };
  if (!complete && !text.empty()) fail("stream does not end with a newline", lines.back());
  for (const std::string& line : lines) {
    auto e = parse_envelope(line);
    if (!e) {
      fail("not one intact envelope", line);
      continue;
    }
    if (e->func == "clock_anchor") {
      long long pid = 0;
      if (std::sscanf(e->message.c_str(), "[CLOCK_ANCHOR] v=1 pid=%lld", &pid) != 1) fail("bad anchor", line);
      ++r.anchors_by_pid[pid];
      continue;
    }
    int w = -1, seq = -1;
    char pad[4096];
    if (spans) {
      auto s = parse_span(e->message);
      if (!s || e->func != "emit_host_span" || s->name != "mp.span") {
        fail("not one intact span", line);
        continue;
      }
      if (std::sscanf(s->attrs.c_str(), "w=%d seq=%d pad=%4095s", &w, &seq, pad) != 3 || w < 0 || w >= writers ||
          seq < 0 || seq >= per_writer || span_pad(w, seq) != pad || s->ts != seq || s->dur != w ||
          s->inv != static_cast<uint64_t>(seq) + 1 || s->hid != 0xabcdef ||
          s->attrs != "w=" + std::to_string(w) + " seq=" + std::to_string(seq) + " pad=" + pad ||
          (!pids.empty() && s->pid != pids[static_cast<size_t>(w)])) {
        fail("span payload damaged", line);
        continue;
      }
    } else {
      size_t close = e->message.find("] ");
      if (e->level != "TIMING" || close == std::string::npos ||
          std::sscanf(e->message.c_str() + close + 2, "w=%d seq=%d pad=%4095s", &w, &seq, pad) != 3 || w < 0 ||
          w >= writers || seq < 0 || seq >= per_writer || log_pad(w, seq) != pad ||
          e->message.substr(close + 2) != "w=" + std::to_string(w) + " seq=" + std::to_string(seq) + " pad=" + pad) {
        fail("record payload damaged", line);
        continue;
      }
    }
    ++r.records;
    if (++seen[static_cast<size_t>(w)][static_cast<size_t>(seq)] != 1) fail("duplicate record", line);
  }
  for (int w = 0; w < writers; ++w) {
    for (int s = 0; s < per_writer; ++s) {
      if (seen[static_cast<size_t>(w)][static_cast<size_t>(s)] == 0) {
        fail("lost record", "w=" + std::to_string(w) + " seq=" + std::to_string(s));
      }
    }
  }
  return r;
}

}  // namespace taskring::log::testing
