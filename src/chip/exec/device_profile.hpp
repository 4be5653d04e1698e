// The per-task device profile of one run on sim (TASKRING_PROFILE=1 or
// `taskring run --profile`): which cluster, core and block ran each kernel
// call, when it started and ended, and its kernel id.
//
// Recording is on the executors' hot path, so each executor appends to a
// lane of its own (no lock, no shared cache line); the lanes are reserved at
// the start of a run and only grow when a run has more calls than the last.
// Nothing is written during the run: emit_device_profile() writes the
// records as spans after it (finalize), so profiling never adds I/O to a
// task. With the profile off the launch path pays one predictable branch.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace taskring::exec {

struct DeviceTaskRecord {
  uint64_t task = 0;   // PTO2TaskId raw value (ring << 32 | local), or the runtime's own id
  uint64_t start = 0;  // DeviceProfile::now() ticks; sorted() turns them into CLOCK_MONOTONIC ns
  uint64_t end = 0;
  int32_t kernel = -1;  // func id
  int32_t block = 0;
  int16_t cluster = 0;
  int16_t core = 0;  // global core id: AIC 0..C-1, then AIV
  bool aic = false;
};

class DeviceProfile {
 public:
  explicit DeviceProfile(int executors);

  // Empties every lane, keeping its capacity, and takes the clock anchor
  // that maps ticks to ns. Call before a run starts.
  void clear();
  // A timestamp for record(): the TSC where there is an invariant one
  // (x86-64; ~8 ns against ~25 ns for clock_gettime), else CLOCK_MONOTONIC ns.
  static uint64_t now() {
#if defined(__x86_64__)
    return __rdtsc();
#else
    return mono();
#endif
  }
  // Appends from executor `executor` (each executor only ever touches its own lane).
  void record(int executor, const DeviceTaskRecord& r) { lanes_[static_cast<size_t>(executor)].records.push_back(r); }
  // All records, by start time, with start/end in CLOCK_MONOTONIC ns (mapped
  // linearly through the anchors taken at clear() and now). Call after the run.
  std::vector<DeviceTaskRecord> sorted() const;
  size_t size() const;

 private:
  struct alignas(64) Lane {
    std::vector<DeviceTaskRecord> records;
  };
  static uint64_t mono();
  std::vector<Lane> lanes_;
  uint64_t anchor_ticks_ = 0, anchor_ns_ = 0;
};

// Writes each record as one [STRACE] span of invocation `inv`:
//   name=chip.run.runner_run.core_task  ts/dur from start/end (CLOCK_MONOTONIC)
//   attrs: core=<id> core_type=aic|aiv cluster=<c> block=<b> kernel=<func id> task=<hex id> [rank=<r>]
// `taskring trace --chrome` draws one lane per core under each rank.
void emit_device_profile(std::string_view callable, uint64_t invocation_id, const DeviceProfile& profile, int rank);

inline constexpr std::string_view kCoreTaskSpan = "chip.run.runner_run.core_task";

}  // namespace taskring::exec
