#include <algorithm>
#include <thread>

#include "taskring/base/knob_table.hpp"
#include "taskring/device/sim_device.hpp"

namespace taskring {

int default_sim_executor_threads() {
  unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp<unsigned>(hw, 1, kSimMaxThreads));
}

Expected<SimDeviceConfig> SimDeviceConfig::from_env(const EnvLookup& env) {
  SimDeviceConfig c;
  c.topology.executor_threads = default_sim_executor_threads();
  c.arena_bytes = static_cast<uint64_t>(kSimDefaultDeviceMemMB) << 20;

  TASKRING_ASSIGN_OR_RETURN(auto clusters, read_int_knob(env, knob(kSimClustersKnob)));
  if (clusters) c.topology.clusters = static_cast<int>(*clusters);
  TASKRING_ASSIGN_OR_RETURN(auto threads, read_int_knob(env, knob(kSimThreadsKnob)));
  if (threads) c.topology.executor_threads = static_cast<int>(*threads);
  TASKRING_ASSIGN_OR_RETURN(auto mem_mb, read_int_knob(env, knob(kSimDeviceMemKnob)));
  if (mem_mb) c.arena_bytes = static_cast<uint64_t>(*mem_mb) << 20;
  if (std::optional<std::string> link = env(kSimLinkKnob)) {
    TASKRING_ASSIGN_OR_RETURN(c.link, LinkModel::parse(kSimLinkKnob, *link));
  }
  return c;
}

}  // namespace taskring
