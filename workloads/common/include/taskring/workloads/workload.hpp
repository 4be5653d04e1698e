// Workload: a reference task graph with a golden check, runnable on any
// ChipWorker.
//
// Life cycle (what `taskring run`, the multi-rank bench harness and the tests
// all do):
//
//   auto w = make_bgemm_workload();             // parameters at their defaults
//   w->params().set("grid_k", 4);                // from flags
//   TASKRING_RETURN_IF_ERROR(w->setup());        // validate, build inputs + reference
//   int id = *worker.register_callable(w->callable());
//   for (each round) {
//     ChipTaskArgs args;
//     w->bind_args(args);                        // resets outputs
//     worker.run(id, args);
//     w->check();                                // golden
//   }
//
// run_round() in round.hpp does one such round and times it. A workload keeps
// its host buffers itself; the ChipTaskArgs it fills point into them and stay
// valid until the next setup() or the workload's destruction. The
// orchestration receives every size it needs as entry scalars, so the
// callable has no state of its own and one registration serves every round.
// Kernels are the built-ins (kernels/builtin_ids.hpp), which every ChipWorker
// registers for every callable; callable().kernels is empty.
//
// One workload object serves one run at a time (its buffers are the run's
// arguments); run several ranks with one object each.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "taskring/base/status.hpp"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/workloads/golden.hpp"
#include "taskring/workloads/params.hpp"

namespace taskring::workloads {

// A library computing what one run computes, timed in the same process
// (e.g. two-thread OpenBLAS for bgemm): the yardstick a run is compared to.
struct Yardstick {
  std::string name;      // "openblas-2t sgemm"
  double flops = 0;      // floating-point operations of one run's work
  double median_ns = 0;  // median wall time of the library doing that work
  int reps = 0;
};

class Workload {
 public:
  virtual ~Workload() = default;

  // Short name, the CLI word: "vector", "bgemm", ...
  virtual std::string_view name() const = 0;
  // One line for `taskring run --list`.
  virtual std::string_view summary() const = 0;

  ParamSet& params() { return params_; }
  const ParamSet& params() const { return params_; }

  // Validates the parameters together (INVALID_ARGUMENT naming the parameter
  // and the rule, e.g. "num_heads 6 is not a multiple of kv_heads 4"), then
  // builds the host inputs (seeded, deterministic) and the reference output.
  // Call before the first round and again after changing parameters.
  virtual Status setup() = 0;

  // The orchestration to register. Precondition: setup() succeeded.
  virtual ChipCallable callable() const = 0;

  // Optional, after setup() and before the first bind_args() on `worker`:
  // places read-only inputs (weights, caches) in the worker's device memory
  // once, so that each run stages only what changes. The default keeps every
  // input a host tensor (staged per run). After it, bind_args() is for this
  // worker only, until the next setup().
  virtual Status place_on_device(ChipWorker& worker) {
    (void)worker;
    return Status::Ok();
  }

  // Resets the output buffer (so a run that writes nothing fails the golden)
  // and fills `args` (empty on entry) for one run. Precondition: setup().
  virtual Status bind_args(ChipTaskArgs& args) = 0;

  // Compares the output of the last run with the reference; see
  // compare_to_reference() for the OK / OUT_OF_RANGE contract.
  virtual Status check(GoldenStats* stats = nullptr) const = 0;

  // The host output buffer that check() reads (tests corrupt it to show that
  // the check can fail). Empty before setup().
  virtual std::span<float> output() = 0;

  // Kernel tasks one run submits with the current parameters (after setup()).
  virtual uint64_t expected_tasks() const = 0;

  // Times the yardstick `reps` times on this workload's inputs (results go
  // to scratch, not to output()); nullopt for a workload without one.
  // Precondition: setup(), and no run of this workload in flight (the
  // yardstick may use every core). Called by `taskring run` after the rounds.
  virtual std::optional<Yardstick> yardstick(int reps) {
    (void)reps;
    return std::nullopt;
  }

 protected:
  ParamSet params_;
};

}  // namespace taskring::workloads
