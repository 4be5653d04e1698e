// The timing spans of one chip run. Every span a chip runtime records goes
// through emit_run_spans, so the record format lives in one place (the
// STRACE emitter of the log layer).
#pragma once

#include <cstdint>
#include <string_view>

#include "taskring/chip/run_stats.hpp"

namespace taskring {

struct RunSpanTimes {
  uint64_t prepare_start_ns = 0;  // chip.run starts
  uint64_t prepare_end_ns = 0;    // chip.run.bind ends
  uint64_t launch_ns = 0;         // chip.run.runner_run starts
  uint64_t done_ns = 0;           // chip.run.runner_run ends
  uint64_t validate_start_ns = 0;
  uint64_t validate_end_ns = 0;  // chip.run ends
};

// Emits chip.run, chip.run.{bind,runner_run,validate} and, when the device
// ran, chip.run.runner_run.device_wall with .orch and .sched. `rank` < 0
// omits the rank attribute.
void emit_run_spans(std::string_view callable, uint64_t invocation_id, const RunSpanTimes& t, const RunStats& stats,
                    bool device_ran, int rank);

// The callable hash ("hid") of a callable name.
uint64_t callable_hash(std::string_view callable);

}  // namespace taskring
