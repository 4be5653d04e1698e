// Process-level logger set-up from the environment.
#pragma once

#include "taskring/base/knobs.hpp"
#include "taskring/base/status.hpp"

namespace taskring::log {

// Reads and validates TASKRING_LOG_LEVEL (threshold, default timing) and
// TASKRING_STRACE_DIR (optional per-process span files, see strace.hpp), then
// applies both. On error nothing is changed and the Status names the variable
// and what it accepts. Call once at start-up, before forking ranks.
Status init_logging(const EnvLookup& env);

}  // namespace taskring::log
