// What the sanitizer does around one block launch of a chip runtime
// (l2::RuntimeBase::launch): the schedule fuzzer may delay the launch
// (write_log.hpp), the launch runs under the tag checker when that is on
// (tag_checker.hpp), and the fuzzer records the task's writable views once
// it returned (so the record is in completion order). The runtime
// calls this only when L2RuntimeConfig::sanitizer is set: off, the sanitizer
// costs one predictable branch per launch.
#pragma once

#include <string>

#include "tag_checker.hpp"
#include "write_log.hpp"

namespace taskring::sanitize {

// Owned by the ChipWorker; which parts are set may change between runs,
// never during one.
struct LaunchSanitizer {
  TagChecker* tags = nullptr;
  WriteLog* writes = nullptr;
  const std::vector<std::string>* kernel_names = nullptr;  // of the run's callable, by func id
};

template <typename NameFn, typename Run>
bool sanitized_launch(LaunchSanitizer& s, const exec::LaunchTask& task, NameFn&& task_name, std::string* failure,
                      Run&& run) {
  if (s.writes != nullptr) s.writes->before_launch();
  const bool ok = s.tags != nullptr ? s.tags->guard(task, run, task_name(), failure) : run(task);
  if (s.writes != nullptr) s.writes->after_launch(task, task_name(), s.kernel_names);
  return ok;
}

}  // namespace taskring::sanitize
