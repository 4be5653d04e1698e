// RunHandle (run_types.hpp): a shared view of the engine's RunState.
#include "engine.hpp"

namespace taskring::node {

Status RunHandle::wait(Deadline deadline) const {
  if (!run_) return failed_precondition("RunHandle::wait: empty handle");
  RunState& r = *run_;
  TASKRING_RETURN_IF_ERROR(
      r.waiter.wait([&] { return r.done.load(std::memory_order_acquire); }, deadline, "the node run to finish"));
  return r.status;
}

bool RunHandle::done() const { return run_ && run_->done.load(std::memory_order_acquire); }

RunCounts RunHandle::counts() const { return done() ? run_->counts : RunCounts{}; }

}  // namespace taskring::node
