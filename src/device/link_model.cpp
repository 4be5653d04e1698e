#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

#include "taskring/device/device.hpp"

namespace taskring {

namespace {
constexpr double kMaxLatencyUs = 1e6;
constexpr double kMaxGBps = 1e4;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool parse_double(std::string_view s, double* out) {
  s = trim(s);
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size() && std::isfinite(*out);
}
}  // namespace

uint64_t LinkModel::cost_ns(uint64_t bytes) const {
  if (!enabled) return 0;
  // GB/s is 1e9 bytes per second, so bytes / (GB/s) is already nanoseconds.
  double ns = latency_us * 1000.0 + (gbytes_per_s > 0.0 ? static_cast<double>(bytes) / gbytes_per_s : 0.0);
  return ns <= 0.0 ? 0 : static_cast<uint64_t>(std::llround(ns));
}

std::string LinkModel::describe() const {
  if (!enabled) return "off";
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%g us + %g GB/s", latency_us, gbytes_per_s);
  return buf;
}

Expected<LinkModel> LinkModel::parse(std::string_view knob, std::string_view text) {
  std::string_view t = trim(text);
  if (t == "off" || t == "OFF" || t == "0") return LinkModel{};
  auto bad = [&] {
    return invalid_argument(std::string(knob) + "='" + std::string(text) +
                            "': expected 'off' or <latency_us>,<GB/s> with latency_us in [0, 1000000] and "
                            "GB/s in (0, 10000], e.g. 17,25");
  };
  size_t comma = t.find(',');
  if (comma == std::string_view::npos) return bad();
  LinkModel m;
  if (!parse_double(t.substr(0, comma), &m.latency_us) || !parse_double(t.substr(comma + 1), &m.gbytes_per_s)) {
    return bad();
  }
  if (m.latency_us < 0.0 || m.latency_us > kMaxLatencyUs || m.gbytes_per_s <= 0.0 || m.gbytes_per_s > kMaxGBps) {
    return bad();
  }
  m.enabled = true;
  return m;
}

}  // namespace taskring
