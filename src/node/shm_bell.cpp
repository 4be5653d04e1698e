#include "shm_bell.hpp"

#include "taskring/base/shared_futex.hpp"

namespace taskring::node {

void bell_ring(ShmBell& bell) {
  bell.epoch.fetch_add(1, std::memory_order_seq_cst);
  if (bell.parked.load(std::memory_order_seq_cst) == 0) return;
  shared_futex_wake_all(&bell.epoch);
}

void bell_park(ShmBell& bell, uint32_t seen, uint64_t timeout_ns) { shared_futex_wait(&bell.epoch, seen, timeout_ns); }

void bell_park_either(ShmBell& bell, uint32_t seen, ShmBell& also, uint32_t also_seen, uint64_t timeout_ns) {
  shared_futex_wait_either(&bell.epoch, seen, &also.epoch, also_seen, timeout_ns);
}

bool bell_either_available() { return shared_futex_wait_either_available(); }

}  // namespace taskring::node
