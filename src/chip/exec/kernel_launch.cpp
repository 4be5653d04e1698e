#include "kernel_launch.hpp"

#include <algorithm>

#include "device_profile.hpp"
#include "taskring/kernels/invoke.hpp"

namespace taskring::exec {

namespace {
// An executor's launch context; a kernel sees it through args[48]/args[49].
struct LaunchScratch {
  ChipTensor tensors[TASKRING_KERNEL_MAX_TENSORS];
  int64_t args[TASKRING_KERNEL_ARG_SLOTS];
  KernelLocalContext local;
  KernelGlobalContext global;
};
}  // namespace

bool launch_block(const LaunchTask& t, int block, const LaunchPlace& place, Device& device,
                  const taskring_kernel_fn* kernels, std::atomic<uint64_t>& calls, LaunchFailure* failure) {
  thread_local LaunchScratch s;
  const Topology& topo = place.topology;
  int owned = (topo.clusters - place.executor + place.executors - 1) / place.executors;
  int cluster = place.executor + place.executors * (block % std::max(owned, 1));
  for (int i = 0; i < t.tensor_count; ++i) {
    s.tensors[i] = t.tensors[i];
    s.tensors[i].buffer.addr = reinterpret_cast<uintptr_t>(device.device_view_unchecked(t.tensors[i].buffer.addr));
  }
  kernels::pack_kernel_args(s.args, s.tensors, t.tensor_count, t.scalars, t.scalar_count, &s.local, &s.global);
  s.global.cluster_count = topo.clusters;
  s.global.aiv_count = topo.aiv_count();
  // Profiled: one TSC read per kernel call plus one per block (a call ends where the next starts).
  uint64_t started = place.profile ? DeviceProfile::now() : 0;
  for (int slot = 0; slot < 3; ++slot) {
    int32_t fid = t.kernels[slot];
    if (fid < 0) continue;
    s.local.block_idx = block;
    s.local.block_num = t.block_num;
    s.local.core_type = slot == 0 ? TASKRING_CORE_AIC : TASKRING_CORE_AIV;
    s.local.core_id = slot == 0 ? cluster : topo.clusters + 2 * cluster + (slot - 1);
    s.local.sub_block_id = slot == 2 ? 1 : 0;
    s.local.tensor_count = t.tensor_count;
    s.local.scalar_count = t.scalar_count;
    s.local.func_id = fid;
    s.local.error_code = 0;
    s.local.error_message[0] = '\0';
    kernels[fid](s.args);
    calls.fetch_add(1, std::memory_order_relaxed);
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
