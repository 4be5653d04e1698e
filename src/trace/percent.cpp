#include "taskring/trace/percent.hpp"

#include <cstring>

namespace taskring::trace {
namespace {
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}
}  // namespace

size_t percent_decode(std::string_view in, std::string& out) {
  size_t bad = 0;
  out.reserve(out.size() + in.size());
  size_t i = 0;
  while (i < in.size()) {
    const void* hit = std::memchr(in.data() + i, '%', in.size() - i);
    size_t pct = hit ? static_cast<size_t>(static_cast<const char*>(hit) - in.data()) : in.size();
    out.append(in.data() + i, pct - i);
    if (pct == in.size()) break;
    int hi = pct + 1 < in.size() ? hex_value(in[pct + 1]) : -1;
    int lo = pct + 2 < in.size() ? hex_value(in[pct + 2]) : -1;
    if (hi >= 0 && lo >= 0) {
      out.push_back(static_cast<char>(hi * 16 + lo));
      i = pct + 3;
    } else {
      out.push_back('%');
      ++bad;
      i = pct + 1;
    }
  }
  return bad;
}

}  // namespace taskring::trace
