// RunHandle (run_types.hpp): a shared view of the engine's RunState.
#include "engine.hpp"

namespace taskring::node {

Status RunHandle::wait(Deadline deadline) const {
  if (!run_) return failed_precondition("RunHandle::wait: empty handle");
  return Engine::wait_run(*run_, deadline);
}

bool RunHandle::done() const {
  if (!run_) return false;
  if (run_->done.load(std::memory_order_acquire)) return true;
  Engine::nudge(*run_);  // a poller does not drive: the scheduler thread must
  return false;
}

RunCounts RunHandle::counts() const { return done() ? run_->counts : RunCounts{}; }

}  // namespace taskring::node
