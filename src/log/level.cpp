#include "taskring/log/level.hpp"

#include <cctype>
#include <string>

namespace taskring::log {

std::string_view level_name(Level level) {
  switch (level) {
    case Level::kDebug: return "DEBUG";
    case Level::kInfo: return "INFO";
    case Level::kTiming: return "TIMING";
    case Level::kWarn: return "WARN";
    case Level::kError: return "ERROR";
    case Level::kNul: return "NUL";
  }
  return "?";
}

Expected<Level> parse_level(std::string_view text, std::string_view var) {
  std::string_view t = text;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  std::string s(t);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  struct Name {
    const char* text;
    Level level;
  };
  static constexpr Name kNames[] = {
      {"debug", Level::kDebug},   {"10", Level::kDebug},    {"info", Level::kInfo}, {"20", Level::kInfo},
      {"timing", Level::kTiming}, {"25", Level::kTiming},   {"warn", Level::kWarn}, {"warning", Level::kWarn},
      {"30", Level::kWarn},       {"error", Level::kError}, {"40", Level::kError},  {"nul", Level::kNul},
      {"null", Level::kNul},      {"60", Level::kNul},
  };
  for (const Name& n : kNames) {
    if (s == n.text) return n.level;
  }
  return invalid_argument(std::string(var) + "='" + std::string(text) +
                          "': expected one of debug, info, timing, warn|warning, error, nul|null (any case) "
                          "or 10, 20, 25, 30, 40, 60");
}

Expected<Level> read_level_knob(const EnvLookup& env) {
  std::optional<std::string> v = env(kLogLevelVar);
  if (!v) return Level::kTiming;
  return parse_level(*v, kLogLevelVar);
}

}  // namespace taskring::log
