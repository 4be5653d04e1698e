// The one place that knows every runtime.
#include "l2_runtime.hpp"

#include <exception>

#include "hbg/hbg_runtime.hpp"
#include "tmr/tmr_runtime.hpp"

namespace taskring {

namespace {
bool is_tmr(std::string_view k) { return k == "tmr" || k == "tensormap_and_ringbuffer"; }
bool is_hbg(std::string_view k) { return k == "hbg" || k == "host_build_graph"; }
}  // namespace

bool is_l2_runtime_name(std::string_view kind) { return is_tmr(kind) || is_hbg(kind); }

std::optional<std::string> call_orchestration(OrchestrationEntryFn entry, const ChipTaskArgs& args) noexcept {
  try {
    entry(args);
    return std::nullopt;
  } catch (const std::exception& e) {
    return std::string("the orchestration threw an exception: ") + e.what();
  } catch (...) {
    return std::string("the orchestration threw an exception that is not a std::exception");
  }
}

Expected<std::unique_ptr<L2Runtime>> create_l2_runtime(std::string_view kind, const L2RuntimeConfig& config) {
  if (is_tmr(kind)) {
    TASKRING_ASSIGN_OR_RETURN(auto rt, tmr::TmrRuntime::create(config));
    return std::unique_ptr<L2Runtime>(std::move(rt));
  }
  if (is_hbg(kind)) {
    TASKRING_ASSIGN_OR_RETURN(auto rt, hbg::HbgRuntime::create(config));
    return std::unique_ptr<L2Runtime>(std::move(rt));
  }
  return invalid_argument("unknown L2 runtime '" + std::string(kind) + "' (available: " + kL2RuntimeNames + ")");
}

}  // namespace taskring
