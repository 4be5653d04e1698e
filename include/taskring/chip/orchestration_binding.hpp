// The runtime bound to an orchestration thread, shared by the orchestration
// API's calls (orchestration_api.hpp) and Graph Execution's (graph_api.hpp).
// Set by `framework_bind_runtime` (orchestration_api.hpp) before the entry
// runs; an orchestration source never touches it directly.
#pragma once

#include <cstdint>

#include "taskring/chip/orchestration_types.hpp"

namespace taskring {

namespace orch_detail {
// The runtime bound to this orchestration thread. thread_local so that
// several chips (ChipWorkers) can orchestrate concurrently in one process.
inline thread_local PTO2Runtime* g_bound_runtime = nullptr;
inline PTO2Runtime* rt() { return g_bound_runtime; }
inline bool live() { return g_bound_runtime != nullptr && !g_bound_runtime->ops->is_fatal(g_bound_runtime); }
inline void* host_view(uint64_t addr) { return g_bound_runtime->ops->host_view(g_bound_runtime, addr); }
inline uint64_t device_address(const void* p) { return g_bound_runtime->ops->device_address(g_bound_runtime, p); }
}  // namespace orch_detail

}  // namespace taskring
