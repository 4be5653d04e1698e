// L2Runtime: what ChipWorker needs from an L2 runtime (tmr or hbg), and the
// factory that makes one. Private to src/chip.
//
// A runtime owns its executor threads (persistent, parked between runs) and
// runs one program at a time: start_run, then run_finished / wait_run, then
// run_status and the stats. A failed run latches one fatal error (code and a
// message naming the task) and leaves the runtime usable for the next run.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "taskring/base/clock.hpp"
#include "taskring/base/expected.hpp"
#include "taskring/chip/graph_stats.hpp"
#include "taskring/chip/orchestration_api.hpp"
#include "taskring/chip/ring_config.hpp"
#include "taskring/chip/run_stats.hpp"
#include "taskring/device/device.hpp"
#include "taskring/kernels/kernel_abi.h"

namespace taskring {

namespace exec {
class DeviceProfile;
}
namespace sanitize {
struct LaunchSanitizer;
}

using OrchestrationEntryFn = void (*)(const ChipTaskArgs&);
using BindRuntimeFn = void (*)(PTO2Runtime*);

// One run: `entry(*args)` with `bind` called first (and with nullptr after);
// kernels looked up in `kernels` (TASKRING_MAX_FUNC_ID entries, nullptr =
// unregistered). `args` and `kernels` must stay valid until the run finished.
struct RunRequest {
  OrchestrationEntryFn entry = nullptr;
  BindRuntimeFn bind = nullptr;
  const ChipTaskArgs* args = nullptr;
  const taskring_kernel_fn* kernels = nullptr;
  uint64_t invocation_id = 0;
  // TASKRING_SKIP_DEVICE_RUN on a runtime whose orchestration runs on the
  // host (hbg): run the orchestration and the uploads, then finish without
  // executing anything. Only sent when host_phase_only_supported().
  bool host_phase_only = false;
  // tmr, threaded: this run's tasks run on its orchestrator thread once the
  // orchestration has submitted them or blocks (as an inline run's do on the
  // caller's), and the executors sit the run out. The chip's pick of the
  // inline way (run_mode.hpp) on a runtime that keeps its threads, so the
  // caller still waits with a deadline. Ignored elsewhere, and with
  // orchestrate_here.
  bool tasks_on_orchestrator = false;
  // RunConfig::orchestrate_here: the caller waits for this run right after
  // start_run and has nothing else to do meanwhile. A threaded tmr runtime
  // then orchestrates on the calling thread instead of waking its
  // orchestrator thread, wakes no executor for the first ready task, and,
  // when that is the run's only task, runs it on the calling thread as well
  // (otherwise it wakes the executors once the orchestration returns or
  // blocks). An orchestration that never returns holds the caller.
  bool orchestrate_here = false;
};

struct L2RuntimeConfig {
  Device* device = nullptr;  // not owned; must outlive the runtime
  RingSizes rings;           // resolved sizes
  int executors = 2;         // capped at the cluster count
  // TASKRING_RUN_INLINE: no runtime threads; start_run orchestrates and
  // executes the whole run on the calling thread and returns when it has
  // finished (`executors` is then 1).
  bool run_inline = false;
  // No-progress backstop of a blocked orchestrator (tmr), and the time a run
  // is given to drain after being stopped (both): TASKRING_STALL_TIMEOUT_MS.
  uint64_t stall_timeout_ms = 10000;
  uint64_t tensor_wait_timeout_ms = 15000;  // get/set_tensor_data (tmr)
  uint64_t graph_arena_bytes = 4ull << 20;  // Graph submission arena (hbg)
  exec::DeviceProfile* profile = nullptr;   // not owned; set: record every kernel call (TASKRING_PROFILE)
  // Not owned; set when TASKRING_SANITIZE is on: every launch goes through
  // it (sanitize/launch_hook.hpp).
  sanitize::LaunchSanitizer* sanitizer = nullptr;
};

class L2Runtime {
 public:
  virtual ~L2Runtime() = default;
  // Starts one run. Errors of the run itself (bad arguments, limits) are
  // latched and seen at run_status; the returned Status is for misuse (a run
  // in flight, a null entry).
  virtual Status start_run(const RunRequest& request) = 0;
  // True once the run finished (healthy or failed).
  virtual bool run_finished() const = 0;
  // Waits for the run to finish; DEADLINE_EXCEEDED leaves it running.
  virtual Status wait_run(Deadline deadline) = 0;
  // OK or the latched fatal error. Precondition: finished.
  virtual Status run_status() const = 0;
  // Latches a fatal error (the first one wins) and stops the run.
  virtual void report_fatal(int32_t code, const std::string& message) = 0;
  virtual RunStats stats() const = 0;
  virtual GraphRunStats graph_stats() const { return GraphRunStats{}; }
  // Whether start_run honours RunRequest::host_phase_only (hbg: the host
  // half is separate from execution; tmr orchestrates on the device).
  virtual bool host_phase_only_supported() const { return false; }
};

// Calls the user's orchestration entry. An exception it throws must not end
// the process (it would unwind out of a runtime thread, or across the API):
// it is returned as a message for the runtime to latch as the run's fatal
// error (PTO2_ERROR_EXPLICIT_ORCH_FATAL); nullopt when the entry returned.
std::optional<std::string> call_orchestration(OrchestrationEntryFn entry, const ChipTaskArgs& args) noexcept;

// "tmr" / "tensormap_and_ringbuffer" or "hbg" / "host_build_graph".
bool is_l2_runtime_name(std::string_view kind);
inline constexpr const char* kL2RuntimeNames = "tmr / tensormap_and_ringbuffer, hbg / host_build_graph";

Expected<std::unique_ptr<L2Runtime>> create_l2_runtime(std::string_view kind, const L2RuntimeConfig& config);

}  // namespace taskring
