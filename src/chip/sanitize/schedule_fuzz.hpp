// TASKRING_SANITIZE=schedule[:N]: run one chip program N times, each under
// another seeded schedule, and fail on the first output byte that differs
// from the first run (docs/sanitizer.md).
//
// Run 0 is the reference: the worker as configured (with the tag checker
// when `tags` is on too). Runs 1..N-1 take seeds base, base+1, ...; a seed
// picks the executor count (1..4), the tmr ring sizes (task window and heap
// between twice and eight times what run 0 used in all, capped at the
// defaults, so they always fit) and the launch delays (write_log.hpp). Every
// tensor argument is restored to its bytes before run 0 ahead of each run;
// the INOUT and OUTPUT_EXISTING arguments are compared bit for bit after it.
// A seed fixes the configuration and the delays, not the threads' timing: a
// race it exposed may need a few runs to show again.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "taskring/base/expected.hpp"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/device/device.hpp"
#include "write_log.hpp"

namespace taskring::sanitize {

struct ScheduleChoice {
  int run = 0;
  uint64_t seed = 0;         // 0 for run 0
  int executors = 0;         // 0: as configured
  uint64_t task_window = 0;  // 0: as configured (tmr only)
  uint64_t heap = 0;         // 0: as configured (tmr only)
  std::string describe() const;
};

// What the fuzzer needs from the ChipWorker.
struct ScheduleHooks {
  // Runs the program once under `choice`, recording into `log`.
  std::function<Expected<RunReport>(const ScheduleChoice& choice, WriteLog* log)> run_once;
  // The device address argument `i` had in the last run.
  std::function<uint64_t(int i)> device_addr;
};

struct ScheduleOptions {
  int runs = 8;
  uint64_t base_seed = 1;  // TASKRING_SANITIZE_SEED
  bool tmr = false;        // ring sizes are drawn only for tmr
};

Expected<RunReport> run_schedules(const ScheduleOptions& opt, const ChipTaskArgs& args, Device& device,
                                  const ScheduleHooks& hooks);

}  // namespace taskring::sanitize
