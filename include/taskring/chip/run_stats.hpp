// RunStats: what the L2 runtime itself measured of one run (task counts by
// kind, kernel calls, back-pressure, heap use, the orchestrator and scheduler
// windows), taken once the run ended. Its job: the device-side half of a
// chip run's report, the same on tmr and hbg.
//
// The chip's run summaries, one job each: l2::RunCounters (src/chip/l2)
// is the live, executor-written atomics a RunStats is filled from and never
// leaves the runtime; RunStats is that snapshot; RunReport (chip_worker.hpp)
// is what ChipWorker::finalize returns: RunStats plus the host side (copies,
// stage times, Graph statistics).
#pragma once

#include <cstdint>

namespace taskring {

struct RunStats {
  uint64_t tasks_submitted = 0;  // every slot taken: kernel, dummy and allocation tasks
  uint64_t tasks_completed = 0;
  uint64_t kernel_tasks = 0;
  uint64_t dummy_tasks = 0;
  uint64_t alloc_tasks = 0;
  uint64_t kernel_calls = 0;                      // kernel_entry invocations (blocks × active cores)
  uint64_t orch_blocked = 0;                      // times the orchestrator waited on a full ring
  uint64_t heap_bytes = 0;                        // runtime-allocated output bytes (1024-aligned)
  uint64_t orch_start_ns = 0, orch_end_ns = 0;    // orchestrator window
  uint64_t sched_start_ns = 0, sched_end_ns = 0;  // first dispatch .. last completion
};

}  // namespace taskring
