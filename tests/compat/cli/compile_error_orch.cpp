// Deliberately does not compile: `taskring orch` must report the compiler's
// message (tests/compat/CMakeLists.txt).
#include "pto_orchestration_api.h"

extern "C" void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  undeclared_function_for_the_cli_test(orch_args);
}
