// Converts a C ABI callable description into a ChipCallable; shared by the
// chip and node C ABIs. The caller has validated `d` (non-null, kernel array
// consistent with kernel_count).
#pragma once

#include "taskring/c_api.h"
#include "taskring/chip/chip_worker.hpp"

namespace taskring {

inline ChipCallable chip_callable_from_desc(const taskring_callable_desc& d) {
  ChipCallable c;
  if (d.name) c.name = d.name;
  c.entry = reinterpret_cast<OrchestrationEntry>(d.entry);
  c.config = reinterpret_cast<OrchestrationConfigFn>(d.config);
  if (d.library) c.orchestration_library = d.library;
  for (int32_t i = 0; i < d.kernel_count; ++i) {
    KernelBinding k;
    k.func_id = d.kernels[i].func_id;
    k.fn = d.kernels[i].fn;
    if (d.kernels[i].library) k.library = d.kernels[i].library;
    c.kernels.push_back(k);
  }
  return c;
}

}  // namespace taskring
