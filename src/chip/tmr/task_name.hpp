// "task <ring>:<local>", how tmr names a task in errors.
#pragma once

#include <cstdio>
#include <string>

#include "taskring/tensor/task_id.hpp"

namespace taskring::tmr {

inline std::string task_name(PTO2TaskId id) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "task %u:%u", id.ring(), id.local());
  return buf;
}

}  // namespace taskring::tmr
