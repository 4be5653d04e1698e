// The speed of the host's CPUs, timed with a fixed compute chunk: a control
// for benchmarks on shared machines.
//
// On a virtual machine a vCPU's speed can move under a running benchmark,
// whatever the benchmark does: on the 2-vCPU guests of docs/benchmarks.md
// each vCPU switches between speeds up to ~2.8x apart, independently, for
// tens of milliseconds to seconds at a time (a host-side neighbour).
// Two runs of the same binary then differ by more than any change being
// measured. Timing the same chunk on every CPU before and after a run tells
// whether the host moved at its edges; steady edges do not prove a steady
// middle, but a move at the edges means the run's figures do not compare.
#pragma once

#include <string>
#include <vector>

#include "taskring/base/clock.hpp"
#include "taskring/base/expected.hpp"

namespace taskring {

// The median time of the chunk on each probed CPU.
struct CpuSpeed {
  int cpu = -1;
  double chunk_us = 0;
  // The L4 node (MPI rank) whose process probed `cpu`; -1 for this process.
  // CPU numbers repeat across hosts, so a CPU is named by (node, cpu).
  int node = -1;
};

// Times the chunk (~5-20 us of vectorised arithmetic on 16 KiB in L1) 64
// times on each CPU of the calling thread's affinity mask, the first
// `max_cpus` of them, by moving the thread there; restores the mask
// afterwards. A CPU stops early once `deadline` passes (its median is then
// over the chunks timed so far, at least one). Takes ~1 ms per CPU on an
// idle machine. Fails (INVALID_ARGUMENT) for max_cpus < 1, and (UNAVAILABLE)
// when the mask cannot be read or restored.
Expected<std::vector<CpuSpeed>> probe_cpu_speed(int max_cpus, Deadline deadline);

// How far the host moved between two probes of the same CPUs: the largest
// |after / before - 1| over the (node, cpu) pairs both hold (0 when none).
double largest_speed_change(const std::vector<CpuSpeed>& before, const std::vector<CpuSpeed>& after);

}  // namespace taskring
