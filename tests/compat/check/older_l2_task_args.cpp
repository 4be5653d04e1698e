// `taskring orch --check` fixture: an upstream name older than 6ebaf7715
// (L2TaskArgs, since renamed ChipTaskArgs upstream).
#include "pto_orchestration_api.h"

extern "C" void aicpu_orchestration_entry(const L2TaskArgs &orch_args) { (void)orch_args; }
