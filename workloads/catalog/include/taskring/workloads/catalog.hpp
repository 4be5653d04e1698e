// The catalog: every workload by name (`taskring run <name>`, `taskring run
// --list`, the multi-rank bench harness).
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "taskring/base/expected.hpp"
#include "taskring/workloads/workload.hpp"

namespace taskring::workloads {

struct CatalogEntry {
  std::string_view name;
  std::unique_ptr<Workload> (*make)();  // a fresh workload, parameters at their defaults
};

// In `taskring run --list` order.
std::span<const CatalogEntry> catalog();

// A fresh workload named `name`; NOT_FOUND listing the known names otherwise.
Expected<std::unique_ptr<Workload>> make_workload(std::string_view name);

}  // namespace taskring::workloads
