// `taskring orch --check` fixture: a newer upstream name taskring does not
// provide (LOG_TIMING).
#include "orchestration_api.h"

extern "C" void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  (void)orch_args;
  LOG_TIMING("orchestration took %d us", 3);
}
