// Log levels and the TASKRING_LOG_LEVEL knob.
//
// The ladder keeps upstream's integers so thresholds read the same in both
// stacks. A record is emitted iff its level >= the threshold; NUL is a
// threshold only (it silences everything) and never a record level.
#pragma once

#include <string_view>

#include "taskring/base/expected.hpp"
#include "taskring/base/knobs.hpp"

namespace taskring::log {

enum class Level : int {
  kDebug = 10,
  kInfo = 20,
  kTiming = 25,  // default threshold; stable performance markers ([STRACE], clock anchor)
  kWarn = 30,
  kError = 40,
  kNul = 60,
};

inline constexpr std::string_view kLogLevelVar = "TASKRING_LOG_LEVEL";

// The envelope tag of `level`: "DEBUG", "INFO", "TIMING", "WARN", "ERROR",
// "NUL"; "?" for a value outside the ladder.
std::string_view level_name(Level level);

// Parses a threshold: debug, info, timing, warn|warning, error, nul|null (any
// case, surrounding blanks ignored) or one of the integers 10, 20, 25, 30, 40,
// 60. Anything else is INVALID_ARGUMENT naming `var` and the accepted values.
Expected<Level> parse_level(std::string_view text, std::string_view var = kLogLevelVar);

// Reads TASKRING_LOG_LEVEL through `env`; unset → Level::kTiming.
Expected<Level> read_level_knob(const EnvLookup& env);

}  // namespace taskring::log
