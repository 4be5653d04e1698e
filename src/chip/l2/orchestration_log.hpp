// rt_log from an orchestration, through the project logger (so it honours
// TASKRING_LOG_LEVEL and keeps the one-record-one-write(2) envelope).
#pragma once

#include "taskring/chip/orchestration_api.hpp"

namespace taskring::l2 {

void orchestration_log(PTO2LogLevel level, const char* func, const char* message);

}  // namespace taskring::l2
