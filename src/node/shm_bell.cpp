#include "shm_bell.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>

namespace taskring::node {

namespace {
// The non-PRIVATE ops key the futex on the physical page, so processes
// sharing the mapping meet on it.
long futex(std::atomic<uint32_t>* addr, int op, uint32_t val, const timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), op, val, timeout, nullptr, 0);
}
}  // namespace

void bell_ring(ShmBell& bell) {
  bell.epoch.fetch_add(1, std::memory_order_seq_cst);
  if (bell.parked.load(std::memory_order_seq_cst) == 0) return;
  futex(&bell.epoch, FUTEX_WAKE, INT_MAX, nullptr);
}

void bell_park(ShmBell& bell, uint32_t seen, uint64_t timeout_ns) {
  timespec ts;
  ts.tv_sec = static_cast<time_t>(timeout_ns / 1000000000ull);
  ts.tv_nsec = static_cast<long>(timeout_ns % 1000000000ull);
  futex(&bell.epoch, FUTEX_WAIT, seen, &ts);
}

}  // namespace taskring::node
