// Runs one orchestration entry with one kernel on a fresh tmr ChipWorker
// configured by `env`: for tests that drive the runtime through an entry of
// their own rather than the shared Rig (runtime_test_util.hpp).
#pragma once

#include <map>
#include <string>

#include "taskring/chip/chip_worker.hpp"

namespace taskring::testing {

// The run's report, or the first error of creating the worker, registering
// the callable or running it.
inline Expected<RunReport> run_one_callable(std::map<std::string, std::string> env, const KernelBinding& kernel,
                                            OrchestrationEntry entry, const ChipTaskArgs& args) {
  ChipWorkerConfig cfg;
  cfg.env = map_env(std::move(env));
  TASKRING_ASSIGN_OR_RETURN(auto worker, ChipWorker::create(cfg));
  ChipCallable c;
  c.name = kernel.name;
  c.entry = entry;
  c.kernels = {kernel};
  TASKRING_ASSIGN_OR_RETURN(int id, worker->register_callable(c));
  return worker->run(id, args);
}

}  // namespace taskring::testing
