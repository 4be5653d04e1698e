// SimDevice: a chip simulated in CPU threads (the default platform).
//
// Device memory is one reserved region of virtual memory (the arena),
// separate from the host heap. Device addresses are offsets into the arena
// tagged with a base that is non-canonical on x86-64 and aarch64, so a device
// address used as a host pointer faults at once instead of corrupting memory.
#pragma once

#include <memory>

#include "taskring/base/knobs.hpp"
#include "taskring/device/device.hpp"

namespace taskring {

// Knobs read by SimDeviceConfig::from_env (docs/knobs.md).
inline constexpr const char* kSimClustersKnob = "TASKRING_SIM_CLUSTERS";
inline constexpr const char* kSimThreadsKnob = "TASKRING_SIM_THREADS";
inline constexpr const char* kSimLinkKnob = "TASKRING_SIM_LINK";
inline constexpr const char* kSimDeviceMemKnob = "TASKRING_SIM_DEVICE_MEM_MB";
inline constexpr int kSimMaxClusters = 64;
inline constexpr int kSimMaxThreads = 256;
inline constexpr int64_t kSimMaxDeviceMemMB = 1ll << 20;  // 1 TiB of address space
inline constexpr int64_t kSimDefaultDeviceMemMB = 16ll << 10;

struct SimDeviceConfig {
  Topology topology;                   // clusters, executor threads
  uint64_t arena_bytes = 16ull << 30;  // reserved virtual size (committed lazily)
  LinkModel link;                      // transfer cost model, off by default

  // Defaults overridden by TASKRING_SIM_CLUSTERS (1..64),
  // TASKRING_SIM_THREADS (1..256; default: hardware threads),
  // TASKRING_SIM_LINK (<latency_us>,<GB/s>), TASKRING_SIM_DEVICE_MEM_MB.
  // Invalid values are INVALID_ARGUMENT naming the variable and its range.
  static Expected<SimDeviceConfig> from_env(const EnvLookup& env);
};

// Executor threads when TASKRING_SIM_THREADS is unset: hardware threads (>= 1).
int default_sim_executor_threads();

// First device address of the sim arena.
inline constexpr uint64_t kSimDeviceAddressBase = 0x0000'D000'0000'0000ull;

// Reserves the arena (virtual memory only; pages are committed on first
// touch). UNAVAILABLE when the reservation fails, INVALID_ARGUMENT for a
// topology outside the knob ranges or an arena under 1 MiB.
Expected<std::unique_ptr<Device>> create_sim_device(const SimDeviceConfig& config);

}  // namespace taskring
