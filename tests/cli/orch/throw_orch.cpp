// An orchestration that submits one task, then throws: the run must fail with
// the exception's message, not abort the process (issue 38, finding 12).
#include <stdexcept>

#include "pto_orchestration_api.h"

extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  CoreTaskArgs copy;
  copy.add_input(orch_args.tensor(0).ref());
  copy.add_output(orch_args.tensor(1).ref());
  rt_submit_aiv_task(0, copy);
  throw std::runtime_error("boom from the orchestration");
}
