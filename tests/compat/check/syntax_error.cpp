// `taskring orch --check` fixture: a plain C++ error (no hint).
#include "orchestration_api.h"

extern "C" void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  (void)orch_args;
  int x = ;
}
