#include <string>

#include "taskring/workloads/node_workload.hpp"

namespace taskring::workloads {

namespace {
constexpr NodeCatalogEntry kEntries[] = {
    {"multi_chip", make_multi_chip_workload},
    {"pipeline", make_pipeline_workload},
    {"moe", make_moe_workload},
};
}  // namespace

std::span<const NodeCatalogEntry> node_catalog() { return kEntries; }

Expected<std::unique_ptr<NodeWorkload>> make_node_workload(std::string_view name) {
  std::string known;
  for (const NodeCatalogEntry& e : kEntries) {
    if (e.name == name) return e.make();
    known += (known.empty() ? "" : ", ") + std::string(e.name);
  }
  return not_found("no node workload named '" + std::string(name) + "' (node workloads: " + known + ")");
}

}  // namespace taskring::workloads
