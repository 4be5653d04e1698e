#include "taskring/workloads/catalog.hpp"

#include <string>

#include "taskring/workloads/bgemm.hpp"
#include "taskring/workloads/decode.hpp"
#include "taskring/workloads/dsv4.hpp"
#include "taskring/workloads/paged_attention.hpp"
#include "taskring/workloads/vector.hpp"

namespace taskring::workloads {

std::span<const CatalogEntry> catalog() {
  static const CatalogEntry kEntries[] = {
      {"vector", make_vector_workload},
      {"bgemm", make_bgemm_workload},
      {"paged_attention", make_paged_attention_workload},
      {"decode", make_decode_workload},
      {"dsv4_chip", make_dsv4_chip_workload},
  };
  return kEntries;
}

Expected<std::unique_ptr<Workload>> make_workload(std::string_view name) {
  std::string known;
  for (const CatalogEntry& e : catalog()) {
    if (e.name == name) return e.make();
    known += (known.empty() ? "" : ", ") + std::string(e.name);
  }
  return not_found("unknown workload '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace taskring::workloads
