#include "taskring/log/init.hpp"

#include "taskring/log/logger.hpp"
#include "taskring/log/strace.hpp"

namespace taskring::log {

Status init_logging(const EnvLookup& env) {
  Expected<Level> level = read_level_knob(env);
  if (!level.ok()) return level.status();
  std::optional<std::string> dir = env(strace::kStraceDirVar);
  if (dir && dir->empty()) {
    return invalid_argument(std::string(strace::kStraceDirVar) + "='': expected an existing writable directory");
  }
  if (dir) {
    Status s = strace::set_strace_dir(*dir);
    if (!s.ok()) return s.with_context(std::string(strace::kStraceDirVar));
  }
  set_threshold(*level);
  return Status::Ok();
}

}  // namespace taskring::log
