// How many CPUs this process may run on, for spin-or-park decisions.
//
// Spinning before a park only pays while every thread that a waiter waits
// for has a CPU of its own. When the processes that hand work to each other
// (a node's chips and parent, a comm domain's ranks) outnumber the CPUs, a
// spinning waiter takes the very CPU its peer needs to make progress, so
// such waits park at once.
#pragma once

#include <cstdint>

namespace taskring {

// CPUs in this process's affinity mask (at least 1).
int usable_cpus();

// `spins` when `contenders` threads that run at the same time fit the usable
// CPUs, else 0 (park at once).
uint32_t spin_budget(uint32_t spins, int contenders);

}  // namespace taskring
