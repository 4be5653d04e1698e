// The require_sync_start admission rule, shared by the chip runtimes: all
// blocks of such a task must be resident at once, so it may not have more
// blocks than the chip has places for a block of its shape (upstream latches
// REQUIRE_SYNC_START_INVALID, 7).
#pragma once

#include <cstdint>
#include <string>

#include "task_shape.hpp"
#include "taskring/device/device.hpp"

namespace taskring::l2 {

// Places for one block of a task of `shape`: a cluster for AIC and MIX
// tasks, an AIV core for AIV tasks.
inline int32_t co_resident_capacity(TaskShape shape, const Topology& topo) {
  return shape == TaskShape::kAiv ? topo.aiv_count() : topo.clusters;
}

// Empty when the task is admissible; otherwise the reason, for a
// REQUIRE_SYNC_START_INVALID (7) report.
inline std::string sync_start_violation(const char* op, TaskShape shape, int32_t blocks, bool sync_start,
                                        const Topology& topo) {
  const int32_t cap = co_resident_capacity(shape, topo);
  if (!sync_start || blocks <= cap) return {};
  return std::string(op) + ": require_sync_start task with " + std::to_string(blocks) + " blocks, but only " +
         std::to_string(cap) + (shape == TaskShape::kAiv ? " AIV cores" : " clusters") + " can hold its blocks at once";
}

}  // namespace taskring::l2
