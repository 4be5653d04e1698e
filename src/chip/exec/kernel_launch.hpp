// Launching one block of a task on the sim cores, shared by the chip
// runtimes (tmr and hbg): translate descriptors to the core's view of device
// memory, lay out the kernel ABI argument vector, and call each active kernel
// slot (AIC, AIV0, AIV1) with its launch context. Kernels that must run at
// the same time (the slots of a MIX block, the blocks of a
// require_sync_start task) run as fibers of one group (launch_co_resident).
#pragma once

#include <atomic>
#include <cstdint>

#include "taskring/device/device.hpp"
#include "taskring/kernels/kernel_abi.h"
#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::exec {

class DeviceProfile;

// What one block launch needs from a task.
struct LaunchTask {
  const ChipTensor* tensors;  // device-address descriptors
  int32_t tensor_count;
  const uint64_t* scalars;
  int32_t scalar_count;
  const int32_t* kernels;  // 3 func ids, INVALID (-1) for unused slots
  int32_t block_num;
  uint64_t id = 0;  // the task's id, for the device profile
};

// Where this executor runs: executor `e` of `executors` owns clusters
// {c : c % executors == e}; blocks rotate over them so core ids spread like
// placement on hardware.
struct LaunchPlace {
  int executor;
  int executors;
  Topology topology;
  DeviceProfile* profile = nullptr;  // when set, each kernel call is recorded (device_profile.hpp)
  uint64_t wait_timeout_ms = 10000;  // longest kernel wait for a sibling (kernel_sync.h)
  // The device's linear window (Device::linear_window) when it has one:
  // descriptors translate without a virtual call per tensor.
  const LinearWindow* window = nullptr;
};

// The first kernel that reported an error.
struct LaunchFailure {
  int32_t func_id = -1;
  int32_t code = 0;
  int32_t core_id = -1;
  int32_t block = -1;        // set by launch_co_resident: the failing kernel's block
  const char* message = "";  // valid until the calling thread's next launch
};

// Runs block `block` of `task`. Counts each kernel call in `calls`, which no
// other thread may write meanwhile (a load and a store, no locked add). Returns
// false (and fills `failure`) when a kernel reported an error; the remaining
// slots of that block are not run.
bool launch_block(const LaunchTask& task, int block, const LaunchPlace& place, Device& device,
                  const taskring_kernel_fn* kernels, std::atomic<uint64_t>& calls, LaunchFailure* failure);

// Runs blocks [first_block, first_block + block_count) of `task`, every
// active slot of each, as co-resident kernels on the calling thread: all of
// them start before any finishes, and a kernel that waits for a sibling
// (taskring/kernels/kernel_sync.h) lets the others run (co_resident.cpp).
// `whole_task`: the blocks of a require_sync_start task, each on its own
// cluster (or AIV core); otherwise one MIX block on this executor's cluster.
// Returns false with the first failure, after every kernel has returned.
bool launch_co_resident(const LaunchTask& task, int first_block, int block_count, bool whole_task,
                        const LaunchPlace& place, Device& device, const taskring_kernel_fn* kernels,
                        std::atomic<uint64_t>& calls, LaunchFailure* failure);

// The cluster a block of a task runs on from executor `place.executor`.
int home_cluster(const LaunchPlace& place, int block);

}  // namespace taskring::exec
