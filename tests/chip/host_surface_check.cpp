// Compiles only when host code that includes chip_worker.hpp (the way tools,
// Python bindings and user programs drive a chip) gets none of the
// orchestration API's orchestration-only names (issue 33). Built with every
// build (tests/chip/CMakeLists.txt); nothing runs.
#include "taskring/chip/chip_worker.hpp"

#if defined(LOG_DEBUG) || defined(LOG_INFO) || defined(LOG_WARN) || defined(LOG_ERROR)
#error "chip_worker.hpp gives host code the orchestration API's unprefixed LOG_* macros"
#endif
#if defined(PTO2_SCOPE) || defined(SIMPLER_SCOPE)
#error "chip_worker.hpp gives host code the orchestration API's scope macros"
#endif

// A C function of that name with another signature: a "conflicting
// declaration of C function" error when the header declared (and, weak,
// defined) framework_bind_runtime in this file. Only declared, never used.
extern "C" int framework_bind_runtime(int not_a_runtime);

// What host code does need still comes through chip_worker.hpp.
static_assert(sizeof(taskring::PTO2OrchestrationConfig) > 0);
static_assert(taskring::INVALID_KERNEL_ID == -1);
