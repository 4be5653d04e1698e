// Formatting helpers shared by the text views (internal to taskring_trace).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace taskring::trace::detail {

// "%.1f" of a µs value.
inline std::string fmt1(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

// The mark for a value that is missing: never a number.
inline constexpr std::string_view kMissing = "\xE2\x80\x94";  // U+2014 EM DASH

// Display width of UTF-8 text (code points, all assumed one column wide).
inline size_t display_width(std::string_view s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}

// `s` right-aligned in `width` columns.
inline std::string rpad(std::string_view s, size_t width) {
  size_t w = display_width(s);
  return std::string(w < width ? width - w : 0, ' ') + std::string(s);
}

// `s` left-aligned in `width` columns.
inline std::string lpad(std::string_view s, size_t width) {
  size_t w = display_width(s);
  return std::string(s) + std::string(w < width ? width - w : 0, ' ');
}

// `s` safe for a terminal and for C-string APIs: control bytes (NUL, '\n',
// ESC, ...) and DEL become `\xNN`, and a backslash becomes `\\`, so a name
// read from a hostile log can neither truncate nor rewrite the report.
inline std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f || c == '\\') {
      char b[8];
      std::snprintf(b, sizeof b, c == '\\' ? "\\\\" : "\\x%02x", c);
      out += b;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

inline std::string hex16(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace taskring::trace::detail
