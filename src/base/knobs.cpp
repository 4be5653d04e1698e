#include "taskring/base/knobs.hpp"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <string>

namespace taskring {

EnvLookup process_env() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

EnvLookup map_env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

namespace {
std::string quote(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}
}  // namespace

Expected<int64_t> parse_int_knob(std::string_view name, std::string_view text, int64_t min, int64_t max) {
  std::string_view t = trim(text);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || v < min || v > max) {
    return invalid_argument(std::string(name) + "=" + quote(text) + ": expected an integer in [" + std::to_string(min) +
                            ", " + std::to_string(max) + "]");
  }
  return v;
}

Expected<std::optional<int64_t>> read_int_knob(const EnvLookup& env, std::string_view name, int64_t min, int64_t max) {
  std::optional<std::string> v = env(name);
  if (!v) return std::optional<int64_t>();
  TASKRING_ASSIGN_OR_RETURN(int64_t parsed, parse_int_knob(name, *v, min, max));
  return std::optional<int64_t>(parsed);
}

Expected<std::optional<bool>> read_bool_knob(const EnvLookup& env, std::string_view name) {
  std::optional<std::string> v = env(name);
  if (!v) return std::optional<bool>();
  std::string s(trim(*v));
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "1" || s == "true" || s == "yes" || s == "on") return std::optional<bool>(true);
  if (s == "0" || s == "false" || s == "no" || s == "off") return std::optional<bool>(false);
  return invalid_argument(std::string(name) + "=" + quote(*v) +
                          ": expected a boolean (1/0, true/false, yes/no, on/off)");
}

Expected<std::optional<bool>> read_bool_knob_any(const EnvLookup& env, const std::vector<std::string>& names,
                                                 std::string* used_name) {
  for (const std::string& n : names) {
    if (env(n)) {
      if (used_name) *used_name = n;
      return read_bool_knob(env, n);
    }
  }
  return std::optional<bool>();
}

Expected<std::optional<std::vector<int64_t>>> read_int_list_knob(const EnvLookup& env, std::string_view name,
                                                                 size_t count, int64_t min, int64_t max) {
  std::optional<std::string> v = env(name);
  if (!v) return std::optional<std::vector<int64_t>>();
  std::vector<std::string_view> parts;
  std::string_view rest(*v);
  while (true) {
    size_t comma = rest.find(',');
    parts.push_back(rest.substr(0, comma));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (parts.size() != 1 && parts.size() != count) {
    return invalid_argument(std::string(name) + "=" + quote(*v) + ": expected one value or " + std::to_string(count) +
                            " comma-separated values, got " + std::to_string(parts.size()));
  }
  std::vector<int64_t> out;
  for (std::string_view p : parts) {
    auto parsed = parse_int_knob(name, p, min, max);
    if (!parsed.ok()) {
      return invalid_argument(std::string(name) + "=" + quote(*v) + ": element " + quote(p) +
                              " is not an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    }
    out.push_back(*parsed);
  }
  if (out.size() == 1) out.assign(count, out[0]);
  return std::optional<std::vector<int64_t>>(std::move(out));
}

}  // namespace taskring
