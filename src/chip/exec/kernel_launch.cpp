#include "kernel_launch.hpp"

#include <algorithm>

#include "device_profile.hpp"
#include "exec/kernel_wait.hpp"
#include "exec/launch_scratch.hpp"
#include "taskring/kernels/invoke.hpp"

namespace taskring::exec {

void prepare_scratch(LaunchScratch& s, const LaunchTask& t, const Topology& topo, Device& device,
                     const LinearWindow* window) {
  for (int i = 0; i < t.tensor_count; ++i) {
    s.tensors[i] = t.tensors[i];
    const DeviceAddr a = t.tensors[i].buffer.addr;
    void* host = window != nullptr && window->contains(a) ? window->view(a) : device.device_view_unchecked(a);
    s.tensors[i].buffer.addr = reinterpret_cast<uintptr_t>(host);
  }
  kernels::pack_kernel_args(s.args, s.tensors, t.tensor_count, t.scalars, t.scalar_count, &s.local, &s.global);
  s.global.cluster_count = topo.clusters;
  s.global.aiv_count = topo.aiv_count();
  s.global.wait_yield = &kernel_wait_yield;
}

void prepare_call(LaunchScratch& s, const LaunchTask& t, int block, int slot, int cluster, int aiv_core,
                  const Topology& topo) {
  s.local.block_idx = block;
  s.local.block_num = t.block_num;
  s.local.core_type = slot == 0 ? TASKRING_CORE_AIC : TASKRING_CORE_AIV;
  if (slot != 0 && aiv_core >= 0) {
    s.local.core_id = topo.clusters + aiv_core;
    s.local.sub_block_id = aiv_core % 2;
  } else {
    s.local.core_id = slot == 0 ? cluster : topo.clusters + 2 * cluster + (slot - 1);
    s.local.sub_block_id = slot == 2 ? 1 : 0;
  }
  s.local.tensor_count = t.tensor_count;
  s.local.scalar_count = t.scalar_count;
  s.local.func_id = t.kernels[slot];
  s.local.error_code = 0;
  s.local.error_message[0] = '\0';
}

int home_cluster(const LaunchPlace& place, int block) {
  if (block == 0) return place.executor;  // one-block tasks: no divisions on the hot path
  const Topology& topo = place.topology;
  int owned = (topo.clusters - place.executor + place.executors - 1) / place.executors;
  return place.executor + place.executors * (block % std::max(owned, 1));
}

// Flattened: the scratch, the call's context and the packing are its own
// steps for co_resident.cpp too, but here, on every task, they are not worth
// a call each.
[[gnu::flatten]] bool launch_block(const LaunchTask& t, int block, const LaunchPlace& place, Device& device,
                                   const taskring_kernel_fn* kernels, std::atomic<uint64_t>& calls,
                                   LaunchFailure* failure) {
  thread_local LaunchScratch s;
  const Topology& topo = place.topology;
  const int cluster = home_cluster(place, block);
  prepare_scratch(s, t, topo, device, place.window);
  WaitContext& w = wait_context();
  w.timeout_ns = place.wait_timeout_ms * 1'000'000ull;
  // Profiled: one TSC read per kernel call plus one per block (a call ends where the next starts).
  uint64_t started = place.profile ? DeviceProfile::now() : 0;
  for (int slot = 0; slot < 3; ++slot) {
    int32_t fid = t.kernels[slot];
    if (fid < 0) continue;
    prepare_call(s, t, block, slot, cluster, -1, topo);
    kernels[fid](s.args);
    // One writer per counter (RunCounters::kernel_calls_of): no locked add.
    calls.store(calls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (place.profile) {
      const uint64_t ended = DeviceProfile::now();
      place.profile->record(place.executor, {t.id, started, ended, fid, block, static_cast<int16_t>(cluster),
                                             static_cast<int16_t>(s.local.core_id), slot == 0});
      started = ended;
    }
    if (s.local.error_code != 0) {
      failure->func_id = fid;
      failure->code = s.local.error_code;
      failure->core_id = s.local.core_id;
      failure->message = s.local.error_message;
      return false;
    }
  }
  return true;
}

}  // namespace taskring::exec
