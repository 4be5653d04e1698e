#include "taskring/chip/error_codes.hpp"

namespace taskring {

std::string_view pto2_error_name(int32_t code) {
  switch (code) {
    case PTO2_ERROR_NONE: return "NONE";
    case PTO2_ERROR_SCOPE_DEADLOCK: return "SCOPE_DEADLOCK";
    case PTO2_ERROR_HEAP_RING_DEADLOCK: return "HEAP_RING_DEADLOCK";
    case PTO2_ERROR_FLOW_CONTROL_DEADLOCK: return "FLOW_CONTROL_DEADLOCK";
    case PTO2_ERROR_DEP_POOL_OVERFLOW: return "DEP_POOL_OVERFLOW";
    case PTO2_ERROR_INVALID_ARGS: return "INVALID_ARGS";
    case PTO2_ERROR_REQUIRE_SYNC_START_INVALID: return "REQUIRE_SYNC_START_INVALID";
    case PTO2_ERROR_TENSOR_WAIT_TIMEOUT: return "TENSOR_WAIT_TIMEOUT";
    case PTO2_ERROR_EXPLICIT_ORCH_FATAL: return "EXPLICIT_ORCH_FATAL";
    case PTO2_ERROR_SCOPE_TASKS_OVERFLOW: return "SCOPE_TASKS_OVERFLOW";
    case PTO2_ERROR_TENSORMAP_OVERFLOW: return "TENSORMAP_OVERFLOW";
    case PTO2_ERROR_SCHEDULER_TIMEOUT: return "SCHEDULER_TIMEOUT";
    case PTO2_ERROR_KERNEL_FAILED: return "KERNEL_FAILED";
    case PTO2_ERROR_UNKNOWN_KERNEL: return "UNKNOWN_KERNEL";
    case PTO2_ERROR_HEAP_TOO_SMALL: return "HEAP_TOO_SMALL";
  }
  return "UNKNOWN_ERROR";
}

StatusCode pto2_error_status_code(int32_t code) {
  switch (code) {
    case PTO2_ERROR_NONE: return StatusCode::kOk;
    case PTO2_ERROR_INVALID_ARGS:
    case PTO2_ERROR_REQUIRE_SYNC_START_INVALID:
    case PTO2_ERROR_UNKNOWN_KERNEL: return StatusCode::kInvalidArgument;
    case PTO2_ERROR_TENSOR_WAIT_TIMEOUT:
    case PTO2_ERROR_SCHEDULER_TIMEOUT: return StatusCode::kDeadlineExceeded;
    case PTO2_ERROR_SCOPE_DEADLOCK:
    case PTO2_ERROR_HEAP_RING_DEADLOCK:
    case PTO2_ERROR_FLOW_CONTROL_DEADLOCK:
    case PTO2_ERROR_DEP_POOL_OVERFLOW:
    case PTO2_ERROR_SCOPE_TASKS_OVERFLOW:
    case PTO2_ERROR_TENSORMAP_OVERFLOW:
    case PTO2_ERROR_HEAP_TOO_SMALL: return StatusCode::kResourceExhausted;
    default: return StatusCode::kAborted;
  }
}

}  // namespace taskring
