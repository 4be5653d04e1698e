#include "fatal_latch.hpp"

#include "taskring/chip/error_codes.hpp"

namespace taskring::l2 {

bool FatalLatch::report(int32_t code, const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  int32_t expected = 0;
  if (!code_.compare_exchange_strong(expected, code, std::memory_order_acq_rel)) return false;
  message_ = message;
  return true;
}

Status FatalLatch::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  int32_t code = code_.load(std::memory_order_acquire);
  if (code == 0) return Status::Ok();
  return Status(pto2_error_status_code(code), std::string(pto2_error_name(code)) + ": " + message_);
}

void FatalLatch::reset() {
  std::lock_guard<std::mutex> lock(mu_);
  code_.store(0, std::memory_order_release);
  message_.clear();
}

}  // namespace taskring::l2
