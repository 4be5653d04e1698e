// An orchestration that never returns: the run timeout
// (TASKRING_RUN_TIMEOUT_MS) must end the run on both runtimes (issue 38,
// finding 7). It sleeps in its loop so as not to take a core from the test.
#include <chrono>
#include <thread>

#include "pto_orchestration_api.h"

extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  (void)orch_args;
  for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}
