// ChipWorker: one chip (device + L2 runtime) behind a run-oriented API.
//
//   auto w = ChipWorker::create(ChipWorkerConfig{});            // sim device, tmr
//   int id = *w->register_callable(callable);                    // orchestration + kernels
//   auto report = w->run(id, host_args, RunConfig{});            // prepare+launch+wait+finalize
//
// Host arguments are ChipTaskArgs whose tensors are HOST tensors (host
// pointers) or DEVICE tensors (from `malloc`). prepare() stages HOST tensors:
// INPUT and INOUT are copied to the device before the run, OUTPUT_EXISTING and
// INOUT are copied back at finalize; DEVICE tensors pass through. The entry
// sees every tensor as a DEVICE tensor.
//
// One run at a time per worker. A failed run (kernel error, deadlock, bad
// arguments) reports its Status at wait/finalize and leaves the worker usable.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "taskring/base/expected.hpp"
#include "taskring/chip/graph_stats.hpp"
#include "taskring/chip/orchestration_types.hpp"
#include "taskring/chip/ring_config.hpp"
#include "taskring/chip/run_stats.hpp"
#include "taskring/device/device.hpp"
#include "taskring/kernels/kernel_abi.h"

namespace taskring {

using OrchestrationEntry = void (*)(const ChipTaskArgs&);
using OrchestrationConfigFn = PTO2OrchestrationConfig (*)(const ChipTaskArgs&);

struct KernelBinding {
  int32_t func_id = -1;
  taskring_kernel_fn fn = nullptr;  // or
  std::string library;              // a shared library exporting `kernel_entry`
  std::string name;
};

struct ChipCallable {
  std::string name;  // appears in errors and spans
  // The orchestration: a function in this program, or a shared library.
  OrchestrationEntry entry = nullptr;
  OrchestrationConfigFn config = nullptr;  // optional
  std::string orchestration_library;
  std::string entry_symbol = "aicpu_orchestration_entry";
  std::string config_symbol = "aicpu_orchestration_config";
  std::vector<KernelBinding> kernels;
};

struct ChipWorkerConfig {
  std::string device = "sim";
  std::string runtime = "tmr";  // tensormap_and_ringbuffer; or "hbg" (host_build_graph)
  EnvLookup env = process_env();
};

struct RunConfig {
  RingSizes rings;  // non-zero entries override the environment
  // 0: from TASKRING_RUN_TIMEOUT_MS (default 60000).
  uint64_t timeout_ms = 0;
  // A run always needs at least the config's expected_arg_count arguments;
  // with this set it refuses more as well (a positive count only), as
  // `taskring orch` does for a stray --tensor or --scalar.
  bool exact_arg_count = false;
  // The thread that launches the run orchestrates it (tmr, threaded; the
  // others ignore it): no wake of the runtime's orchestrator thread per run,
  // no executor woken for the orchestration's first ready task, and a run of
  // one task executed by that thread too. The run timeout then covers only
  // what runs after the orchestration returned: an orchestration that never
  // returns holds the caller (as an inline run does), so whoever sets this
  // needs its own watch (a node's chip child sets it; the node's parent
  // kills a chip whose task runs past its timeout, docs/node.md).
  bool orchestrate_here = false;
};

// The report of one chip run (ChipWorker::finalize): the runtime's RunStats
// plus what only the host side knows. Its job: everything a caller learns
// about a finished run (run_stats.hpp lists the chip's other run summaries).
struct RunReport {
  RunStats stats;
  uint64_t h2d_calls = 0, h2d_bytes = 0, d2h_calls = 0, d2h_bytes = 0;
  uint64_t bind_ns = 0, run_ns = 0, validate_ns = 0;  // host-side stages
  uint64_t invocation_id = 0;
  bool skipped_device_run = false;
  // The run went inline: the calling thread orchestrated and ran every task
  // (TASKRING_RUN_INLINE=1, or the chip's pick when it is unset on tmr).
  bool ran_inline = false;
  GraphRunStats graph;  // hbg only
};

class ChipWorker {
 public:
  static Expected<std::unique_ptr<ChipWorker>> create(const ChipWorkerConfig& config);
  ~ChipWorker();
  ChipWorker(const ChipWorker&) = delete;
  ChipWorker& operator=(const ChipWorker&) = delete;

  // Validates and registers a callable; returns its id. Kernel func ids must
  // be in [0, 1024) and unique; libraries must load.
  Expected<int> register_callable(const ChipCallable& callable);

  // Stages arguments and binds the run (no execution).
  Status prepare(int callable_id, const ChipTaskArgs& host_args, const RunConfig& config = {});
  // Starts the prepared run.
  Status launch();
  // 1 finished, 0 running; an error when nothing was launched.
  Expected<int> poll();
  // Waits for the launched run up to the run timeout; returns its outcome.
  Status wait();
  // Copies outputs back, releases staging, returns the report (or the run's
  // error). Always leaves the worker ready for the next prepare.
  Expected<RunReport> finalize();
  // prepare + launch + wait + finalize.
  Expected<RunReport> run(int callable_id, const ChipTaskArgs& host_args, const RunConfig& config = {});

  Device& device();
  Topology topology() const;

 private:
  struct Impl;
  explicit ChipWorker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace taskring
