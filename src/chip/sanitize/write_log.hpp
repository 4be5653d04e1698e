// The schedule fuzzer's record of one run (TASKRING_SANITIZE=schedule):
// which task launched with which writable views (OUTPUT, OUTPUT_EXISTING,
// INOUT and NO_DEP arguments), in the order the launches returned, so that a byte that differs
// between two runs can be traced to the tasks that wrote it in each. It also
// perturbs the schedule: before each launch a seeded coin decides whether the
// executor first spins a random while (up to kMaxDelayUs, yielding), so that
// tasks the tags leave unordered run in other orders from run to run.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "exec/kernel_launch.hpp"

namespace taskring::sanitize {

class WriteLog {
 public:
  static constexpr uint64_t kMaxDelayUs = 200;

  // Clears the record. `seed` != 0: delay launches as above, drawn from it.
  void begin_run(uint64_t seed);
  // Around each block launch, on the launching thread.
  void before_launch() {
    if (seed_ != 0) delay();
  }
  void after_launch(const exec::LaunchTask& task, const std::string& task_name, const std::vector<std::string>* names);
  // The last launch whose writable views cover device address `addr`: "task
  // 0:3 (kernel 'inc' (id 2), argument 1 INOUT)"; nullopt when none does.
  std::optional<std::string> last_writer(uint64_t addr) const;

 private:
  struct Entry {
    uint64_t begin, end;  // device addresses of one writable view
    std::string who;
  };
  void delay();

  mutable std::mutex mu_;  // executors launch concurrently
  std::vector<Entry> entries_;
  uint64_t seed_ = 0;
  std::atomic<uint64_t> generation_{0};
  std::atomic<uint64_t> streams_{0};
};

}  // namespace taskring::sanitize
