// The knobs ChipWorker reads at create (docs/knobs.md, base/knob_table):
// run control, staging and the per-runtime settings it hands to L2Runtime.
#pragma once

#include <cstdint>

#include "taskring/base/expected.hpp"
#include "taskring/base/knobs.hpp"
#include "taskring/chip/sanitize_mode.hpp"

namespace taskring {

struct ChipKnobs {
  uint64_t stall_timeout_ms = 10000;        // TASKRING_STALL_TIMEOUT_MS
  uint64_t tensor_wait_timeout_ms = 15000;  // TASKRING_TENSOR_WAIT_TIMEOUT_MS
  uint64_t run_timeout_ms = 60000;          // TASKRING_RUN_TIMEOUT_MS
  uint64_t graph_arena_bytes = 4ull << 20;  // TASKRING_GRAPH_ARENA_BYTES
  bool skip_device_run = false;             // TASKRING_SKIP_DEVICE_RUN / SIMPLER_SKIP_DEVICE_RUN
  bool profile = false;                     // TASKRING_PROFILE
  bool run_inline = false;                  // TASKRING_RUN_INLINE
  bool run_inline_set = false;              // TASKRING_RUN_INLINE given (unset: the chip picks, run_mode.hpp)
  int rank = -1;                            // TASKRING_RANK; -1 when unset
  sanitize::SanitizeMode sanitize;          // TASKRING_SANITIZE
};

// Reads and validates every knob above; the error names the variable and
// its accepted range.
Expected<ChipKnobs> read_chip_knobs(const EnvLookup& env);

}  // namespace taskring
