#include "taskring/base/waiter.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <string>

namespace taskring {

namespace {
long futex(std::atomic<uint32_t>* addr, int op, uint32_t val, const timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), op, val, timeout, nullptr, 0);
}
}  // namespace

void Waiter::park(uint32_t seen_epoch, uint64_t timeout_ns) {
  timespec ts;
  ts.tv_sec = static_cast<time_t>(timeout_ns / 1000000000ull);
  ts.tv_nsec = static_cast<long>(timeout_ns % 1000000000ull);
  // FUTEX_WAIT returns at once if the epoch moved since `seen_epoch`, which
  // closes the race between the predicate check and going to sleep.
  futex(&epoch_, FUTEX_WAIT_PRIVATE, seen_epoch, &ts);
}

void Waiter::wake_all() { futex(&epoch_, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr); }

Status Waiter::deadline_status(const char* what) {
  return deadline_exceeded(std::string("deadline passed while waiting for ") + what);
}

}  // namespace taskring
