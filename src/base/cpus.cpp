#include "taskring/base/cpus.hpp"

#include <sched.h>

namespace taskring {

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  const int n = CPU_COUNT(&set);
  return n < 1 ? 1 : n;
}

uint32_t spin_budget(uint32_t spins, int contenders) { return contenders <= usable_cpus() ? spins : 0; }

}  // namespace taskring
