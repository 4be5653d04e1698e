// The five-task vector example (docs/workloads.md#vector):
//   c = a + b;  d = c + 1;  e = c + 2;  g = d · e;  f = g + c
// with a = 2 and b = 3 everywhere, so every element of f is 47.
// Parameters: size (elements per tensor).
#pragma once

#include <memory>

#include "taskring/workloads/workload.hpp"

namespace taskring::workloads {

std::unique_ptr<Workload> make_vector_workload();

}  // namespace taskring::workloads
