// A small writer of upstream-format [STRACE] v=1 and [CLOCK_ANCHOR] v=1
// records, written from the format spec so the parser tests do not depend on
// the emitter library.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace taskring::trace::testing {

inline constexpr size_t kNameCap = 64;
inline constexpr size_t kAttrsCap = 192;

// Percent-encodes `in` into at most `cap` bytes. Bytes outside 0x20-0x7E and
// `% [ ]` always, and space and `=` unless `attrs`, become `%XX`. When the
// input does not fit, whole units are kept while they fit; if the field is then
// exactly full the last unit is dropped; finally `~` is appended.
inline std::string encode_field(std::string_view in, size_t cap, bool attrs) {
  std::string out;
  bool truncated = false;
  size_t last_unit = 0;
  for (unsigned char c : in) {
    bool esc = c < 0x20 || c > 0x7E || c == '%' || c == '[' || c == ']' || (!attrs && (c == ' ' || c == '='));
    char unit[4];
    size_t n = 1;
    if (esc) {
      std::snprintf(unit, sizeof unit, "%%%02X", c);
      n = 3;
    } else {
      unit[0] = static_cast<char>(c);
    }
    if (out.size() + n > cap) {
      truncated = true;
      break;
    }
    last_unit = n;
    out.append(unit, n);
  }
  if (truncated) {
    if (out.size() == cap) out.resize(out.size() - last_unit);
    out.push_back('~');
  }
  return out;
}

struct SpanRec {
  int64_t pid = 100;
  int64_t tid = 100;
  uint64_t inv = 1;
  uint64_t hid = 0xabcdef0123456789ull;
  int depth = 0;
  std::string name = "chip.run";
  int64_t ts = 1000;
  int64_t dur = 10;
  std::string attrs;  // raw, encoded by the writer
};

enum class Prefix { kMono, kWall, kNone };

inline std::string envelope(Prefix p, int64_t mono_ns, std::string_view func) {
  char b[128];
  switch (p) {
    case Prefix::kMono:
      std::snprintf(b, sizeof b, "[mono_ns=%lld][T0x7f12a4c0b740][TIMING] %.*s: ", static_cast<long long>(mono_ns),
                    static_cast<int>(func.size()), func.data());
      return b;
    case Prefix::kWall:
      std::snprintf(b, sizeof b,
                    "[2026-08-04 10:11:12.123456][T0x7f12a4c0b740][TIMING] %.*s: ", static_cast<int>(func.size()),
                    func.data());
      return b;
    case Prefix::kNone: return "";
  }
  return "";
}

// One record without the trailing newline.
inline std::string strace(const SpanRec& s, Prefix p = Prefix::kMono) {
  // Wraps on purpose (unsigned): hostile tests write timestamps at the int64 limits.
  std::string out =
      envelope(p, static_cast<int64_t>(static_cast<uint64_t>(s.ts) + static_cast<uint64_t>(s.dur)), "emit_host_span");
  char b[256];
  std::snprintf(b, sizeof b,
                "[STRACE] v=1 pid=%lld tid=%lld inv=%llu hid=%llx depth=%d name=", static_cast<long long>(s.pid),
                static_cast<long long>(s.tid), static_cast<unsigned long long>(s.inv),
                static_cast<unsigned long long>(s.hid), s.depth);
  out += b;
  out += encode_field(s.name, kNameCap, false);
  std::snprintf(b, sizeof b, " ts=%lld dur=%lld", static_cast<long long>(s.ts), static_cast<long long>(s.dur));
  out += b;
  if (!s.attrs.empty()) out += " " + encode_field(s.attrs, kAttrsCap, true);
  return out;
}

inline std::string anchor(int64_t pid, int64_t mono_ns, int64_t wall_ns, Prefix p = Prefix::kMono) {
  return envelope(p, mono_ns, "clock_anchor") + "[CLOCK_ANCHOR] v=1 pid=" + std::to_string(pid) +
         " mono_ns=" + std::to_string(mono_ns) + " wall_ns=" + std::to_string(wall_ns);
}

inline std::string noise(std::string_view text, int64_t mono_ns = 5) {
  return "[mono_ns=" + std::to_string(mono_ns) + "][T0x7f12a4c0b740][INFO] Worker::run: [worker.cpp:42] " +
         std::string(text);
}

}  // namespace taskring::trace::testing
