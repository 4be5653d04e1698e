// Allocation-free number rendering for the record hot path.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace taskring::log::detail {

// Each put_* writes at `p` and returns the end. Callers size the buffer for
// the maximum widths (20 decimal digits + sign, 16 hex digits).
template <typename T>
inline char* put_dec(char* p, T v) {
  return std::to_chars(p, p + 24, v).ptr;
}
template <typename T>
inline char* put_hex(char* p, T v) {
  return std::to_chars(p, p + 24, v, 16).ptr;
}
inline char* put_str(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

}  // namespace taskring::log::detail
