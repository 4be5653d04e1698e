// Error codes of the L2 runtime (upstream values), latched as a run's fatal
// error and reported with a message naming the task, kernel, ring or knob.
#pragma once

#include <cstdint>
#include <string_view>

#include "taskring/base/status.hpp"

namespace taskring {

enum PTO2ErrorCode : int32_t {
  PTO2_ERROR_NONE = 0,
  PTO2_ERROR_SCOPE_DEADLOCK = 1,
  PTO2_ERROR_HEAP_RING_DEADLOCK = 2,
  PTO2_ERROR_FLOW_CONTROL_DEADLOCK = 3,
  PTO2_ERROR_DEP_POOL_OVERFLOW = 4,
  PTO2_ERROR_INVALID_ARGS = 5,
  PTO2_ERROR_DEPENDENCY_OVERFLOW = 6,  // upstream hbg only (tmr retired it); never raised by taskring
  PTO2_ERROR_REQUIRE_SYNC_START_INVALID = 7,
  PTO2_ERROR_TENSOR_WAIT_TIMEOUT = 8,
  PTO2_ERROR_EXPLICIT_ORCH_FATAL = 9,
  PTO2_ERROR_SCOPE_TASKS_OVERFLOW = 10,
  PTO2_ERROR_TENSORMAP_OVERFLOW = 11,
  PTO2_ERROR_SCHEDULER_TIMEOUT = 100,
  // Upstream's async-completion codes; taskring has no async engines and
  // never raises them.
  PTO2_ERROR_ASYNC_COMPLETION_INVALID = 101,
  PTO2_ERROR_ASYNC_WAIT_OVERFLOW = 102,
  PTO2_ERROR_ASYNC_REGISTRATION_FAILED = 103,
  // taskring additions (outside upstream's range).
  PTO2_ERROR_KERNEL_FAILED = 200,   // a kernel reported an error through its context
  PTO2_ERROR_UNKNOWN_KERNEL = 201,  // func id not registered
  PTO2_ERROR_HEAP_TOO_SMALL = 202,  // one request larger than the whole heap ring
};

// "SCOPE_DEADLOCK", ...
std::string_view pto2_error_name(int32_t code);

// Maps a runtime code onto a Status class.
StatusCode pto2_error_status_code(int32_t code);

}  // namespace taskring
