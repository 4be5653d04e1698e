#include "taskring/base/cpus.hpp"

#include <sched.h>

#include <atomic>
#include <string>

namespace taskring {

namespace {

// The CPU count from before pin_to_cpu_slot() narrowed the mask, 0 until
// then. Process-wide on purpose: the pin is process-wide state itself, and
// every spin-or-park decision after it must still see the CPUs the process
// shares with its peers, not the one it was pinned to.
std::atomic<int> g_cpus_before_pin{0};

int mask_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  const int n = CPU_COUNT(&set);
  return n < 1 ? 1 : n;
}

}  // namespace

int usable_cpus() {
  const int before = g_cpus_before_pin.load(std::memory_order_relaxed);
  return before > 0 ? before : mask_cpus();
}

Expected<int> pin_to_cpu_slot(int slot) {
  cpu_set_t all;
  CPU_ZERO(&all);
  if (sched_getaffinity(0, sizeof(all), &all) != 0) return unavailable("pin_to_cpu_slot: sched_getaffinity failed");
  const int n = CPU_COUNT(&all);
  if (n < 1) return unavailable("pin_to_cpu_slot: empty affinity mask");
  const int want = ((slot % n) + n) % n;
  for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &all) || seen++ != want) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof(one), &one) != 0)
      return unavailable("pin_to_cpu_slot: the kernel refused CPU " + std::to_string(cpu));
    int expected = 0;
    g_cpus_before_pin.compare_exchange_strong(expected, n, std::memory_order_relaxed);
    return cpu;
  }
  return unavailable("pin_to_cpu_slot: no CPU for slot " + std::to_string(slot));
}

uint32_t spin_budget(uint32_t spins, int contenders) { return contenders <= usable_cpus() ? spins : 0; }

}  // namespace taskring
