#include "taskring/chip/sanitize_mode.hpp"

#include <string>

#include "taskring/base/knob_table.hpp"

namespace taskring::sanitize {

namespace {

constexpr const char* kAccepted = "`off`, `tags`, `schedule`, `schedule:N` (N in [2, 1000]) or `tags,schedule[:N]`";

Status bad(std::string_view source, std::string_view text, const std::string& why) {
  return invalid_argument(std::string(source) + "='" + std::string(text) + "': " + why + "; expected " + kAccepted);
}

}  // namespace

Expected<SanitizeMode> parse_sanitize_mode(std::string_view source, std::string_view text) {
  SanitizeMode m;
  if (text.empty() || text == "off" || text == "0") return m;
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item == "tags") {
      if (m.tags) return bad(source, text, "'tags' given twice");
      m.tags = true;
    } else if (item.substr(0, 8) == "schedule") {
      if (m.schedule_runs > 0) return bad(source, text, "'schedule' given twice");
      m.schedule_runs = kDefaultScheduleRuns;
      if (item.size() > 8) {
        if (item[8] != ':') return bad(source, text, "unknown mode '" + std::string(item) + "'");
        auto n = parse_int_knob(std::string(source) + " schedule runs", item.substr(9), 2, kMaxScheduleRuns);
        if (!n.ok()) return bad(source, text, n.status().message());
        m.schedule_runs = static_cast<int>(*n);
      }
    } else {
      return bad(source, text, "unknown mode '" + std::string(item) + "'");
    }
    if (comma != std::string_view::npos && rest.empty()) return bad(source, text, "trailing ','");
  }
  return m;
}

std::string SanitizeMode::describe() const {
  if (!any()) return "off";
  std::string s = tags ? "tags" : "";
  if (schedule_runs > 0) s += std::string(tags ? "," : "") + "schedule:" + std::to_string(schedule_runs);
  return s;
}

Expected<SanitizeMode> read_sanitize_mode(const EnvLookup& env) {
  const KnobSpec& spec = knob("TASKRING_SANITIZE");
  std::optional<std::string> v = env(spec.name);
  SanitizeMode m;
  if (v) {
    TASKRING_ASSIGN_OR_RETURN(m, parse_sanitize_mode(spec.name, *v));
  }
  TASKRING_ASSIGN_OR_RETURN(auto seed, read_int_knob(env, knob("TASKRING_SANITIZE_SEED")));
  if (seed) m.seed = static_cast<uint64_t>(*seed);
  return m;
}

}  // namespace taskring::sanitize
