#include "worker_state.hpp"

#include <cstdio>

#include "errors.hpp"

namespace taskring::py {

BufferState& check_buffer(WorkerState& st, const PyDeviceBuffer& b, const std::string& op) {
  auto owner = b.owner.lock();
  if (!b.state || !owner || owner->worker == nullptr) {
    throw_error(StatusCode::kFailedPrecondition, op + ": the buffer's worker is closed");
  }
  if (owner.get() != &st) {
    throw_error(StatusCode::kInvalidArgument, op + ": the buffer belongs to another worker");
  }
  if (b.state->freed) {
    throw_error(StatusCode::kFailedPrecondition, op + ": device buffer " + hex(b.state->addr) + " was freed");
  }
  return *b.state;
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace taskring::py
