// `taskring orch --check` fixture: an upstream runtime header that is not
// part of the orchestration API.
#include "pto_runtime2.h"

extern "C" void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) { (void)orch_args; }
