// TASKRING_SANITIZE: which orchestration checks a chip run makes on sim
// (docs/sanitizer.md). Parsed once at ChipWorker::create (and by
// `taskring info`, which shows and validates it).
//   off | tags | schedule[:N] | tags,schedule[:N]   (N in [2, 1000], default 8)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "taskring/base/expected.hpp"
#include "taskring/base/knobs.hpp"

namespace taskring::sanitize {

inline constexpr int kDefaultScheduleRuns = 8;
inline constexpr int kMaxScheduleRuns = 1000;

struct SanitizeMode {
  bool tags = false;      // per-task read/write checks (tag_checker.hpp)
  int schedule_runs = 0;  // 0: off; else runs per program, each with another seeded schedule
  uint64_t seed = 1;      // TASKRING_SANITIZE_SEED: the seed of schedule run 1 (run k: seed + k - 1)
  bool any() const { return tags || schedule_runs > 0; }
  // "off", "tags", "schedule:8", "tags,schedule:8".
  std::string describe() const;
};

// Parses the knob's text; the error names `source` (the variable or the
// CLI option), the text and what is accepted.
Expected<SanitizeMode> parse_sanitize_mode(std::string_view source, std::string_view text);

// Reads TASKRING_SANITIZE and TASKRING_SANITIZE_SEED from `env` (unset: off, seed 1).
Expected<SanitizeMode> read_sanitize_mode(const EnvLookup& env);

}  // namespace taskring::sanitize
