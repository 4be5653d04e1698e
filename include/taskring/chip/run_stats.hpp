// Counters and windows of one L2 run, reported at finalize.
#pragma once

#include <cstdint>

namespace taskring {

struct RunStats {
  uint64_t tasks_submitted = 0;   // every slot taken: kernel, dummy and allocation tasks
  uint64_t tasks_completed = 0;
  uint64_t kernel_tasks = 0;
  uint64_t dummy_tasks = 0;
  uint64_t alloc_tasks = 0;
  uint64_t kernel_calls = 0;      // kernel_entry invocations (blocks × active cores)
  uint64_t orch_blocked = 0;      // times the orchestrator waited on a full ring
  uint64_t heap_bytes = 0;        // runtime-allocated output bytes (1024-aligned)
  uint64_t orch_start_ns = 0, orch_end_ns = 0;    // orchestrator window
  uint64_t sched_start_ns = 0, sched_end_ns = 0;  // first dispatch .. last completion
};

}  // namespace taskring
