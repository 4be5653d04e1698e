// Environment knobs: read once at init, validated, reported by name.
//
// Every knob taskring reads is listed in docs/knobs.md. Readers take an
// `EnvLookup` so tests (and multi-threaded callers) never need setenv(3);
// `process_env()` reads the real environment.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "taskring/base/expected.hpp"

namespace taskring {

// Returns the value of a variable, or nullopt when it is unset.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

// Looks variables up with getenv(3).
EnvLookup process_env();
// Looks variables up in `vars` only (for tests and for per-run config maps).
EnvLookup map_env(std::map<std::string, std::string> vars);

// Parses `text` as a base-10 integer in [min, max]. The error names `name`,
// the text and the accepted range: "TASKRING_SIM_CLUSTERS='0': expected an
// integer in [1, 24]".
Expected<int64_t> parse_int_knob(std::string_view name, std::string_view text, int64_t min, int64_t max);

// Unset → nullopt; set → parse_int_knob.
Expected<std::optional<int64_t>> read_int_knob(const EnvLookup& env, std::string_view name, int64_t min, int64_t max);

// Reads a boolean: 1/0, true/false, yes/no, on/off (any case). Unset → nullopt.
Expected<std::optional<bool>> read_bool_knob(const EnvLookup& env, std::string_view name);

// Reads "v" or "v0,v1,...,v{count-1}" (each in [min, max]). A single value is
// repeated `count` times. Unset → nullopt. Any other number of values is an
// error naming the variable.
Expected<std::optional<std::vector<int64_t>>> read_int_list_knob(const EnvLookup& env, std::string_view name,
                                                                 size_t count, int64_t min, int64_t max);

// Reads the first of `names` that is set (aliases, e.g. TASKRING_SKIP_DEVICE_RUN
// then SIMPLER_SKIP_DEVICE_RUN); returns which one it was through `used_name`.
Expected<std::optional<bool>> read_bool_knob_any(const EnvLookup& env, const std::vector<std::string>& names,
                                                 std::string* used_name = nullptr);

}  // namespace taskring
