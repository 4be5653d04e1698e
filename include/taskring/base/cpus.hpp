// How many CPUs this process may run on, for spin-or-park decisions.
//
// Spinning before a park only pays while every thread that a waiter waits
// for has a CPU of its own. When the processes that hand work to each other
// (a node's chips and parent, a comm domain's ranks) outnumber the CPUs, a
// spinning waiter takes the very CPU its peer needs to make progress, so
// such waits park at once.
#pragma once

#include <cstdint>

#include "taskring/base/expected.hpp"

namespace taskring {

// CPUs in this process's affinity mask (at least 1); after
// pin_to_cpu_slot(), the count from before the pin (the CPUs the process
// shares with its peers, which is what spin-or-park decisions need).
int usable_cpus();

// Pins the calling thread to the (slot mod N)-th CPU of the N in its
// affinity mask and returns that CPU's id. Meant for a process that runs on
// one thread (a node's inline chip child): N such processes on fewer CPUs
// then keep one placement, the same in every run, instead of the one the
// kernel's wake-ups happen to make. Fails (UNAVAILABLE, naming the CPU)
// when the kernel refuses the mask.
Expected<int> pin_to_cpu_slot(int slot);

// `spins` when `contenders` threads that run at the same time fit the usable
// CPUs, else 0 (park at once).
uint32_t spin_budget(uint32_t spins, int contenders);

}  // namespace taskring
