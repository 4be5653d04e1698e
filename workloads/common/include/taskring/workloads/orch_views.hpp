// Views an orchestration builds inside a task graph.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>

#include "pto_orchestration_api.h"

namespace taskring::workloads {

// A strided view of `base`'s buffer (element strides, element `start`) that
// keeps base's creator, so the runtime still orders it after the task that
// produced `base`. A view that leaves the buffer comes back poisoned
// (ViewError::kOutOfRange), which the submit that uses it rejects by name.
inline ChipTensor strided_view(const ChipTensor& base, std::initializer_list<uint32_t> shapes,
                               std::initializer_list<uint32_t> strides, uint64_t start) {
  auto t = try_make_tensor_strided(base.buffer.addr, base.buffer.size,
                                   std::span<const uint32_t>(shapes.begin(), shapes.size()),
                                   std::span<const uint32_t>(strides.begin(), strides.size()), start, base.dtype,
                                   base.manual_dep, base.version, base.address_space);
  if (!t.ok()) {
    ChipTensor bad;
    bad.poison = ViewError::kOutOfRange;
    return bad;
  }
  t->owner_task_id = base.owner_task_id;
  return *t;
}

}  // namespace taskring::workloads
