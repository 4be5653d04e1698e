// What one kernel call of a block launch needs besides the task: the core's
// copy of the descriptors, the ABI argument vector and the two contexts.
// Shared by the sequential launch (kernel_launch.cpp) and the co-resident
// one (co_resident.cpp).
#pragma once

#include <cstdint>

#include "exec/kernel_launch.hpp"
#include "taskring/kernels/kernel_abi.h"
#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::exec {

struct LaunchScratch {
  ChipTensor tensors[TASKRING_KERNEL_MAX_TENSORS];
  int64_t args[TASKRING_KERNEL_ARG_SLOTS];
  KernelLocalContext local;
  KernelGlobalContext global;
};

// Translates `task`'s descriptors to the core's view of device memory
// (through `window` when it is non-null and holds the address) and packs the
// argument vector and the chip-wide context into `s`.
void prepare_scratch(LaunchScratch& s, const LaunchTask& task, const Topology& topo, Device& device,
                     const LinearWindow* window);

// Fills `s.local` for the kernel of `slot` (0 AIC, 1 AIV0, 2 AIV1) of block
// `block` on `cluster`. `aiv_core` >= 0 places a lone AIV kernel on that AIV
// core index instead (the blocks of an AIV require_sync_start task each get
// their own core).
void prepare_call(LaunchScratch& s, const LaunchTask& task, int block, int slot, int cluster, int aiv_core,
                  const Topology& topo);

}  // namespace taskring::exec
