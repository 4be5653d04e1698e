// The trace library from Python: parse logs, build the (rank, round) matrix,
// hand the results back as plain Python values (taskring/trace wraps them).
#pragma once

#include <pybind11/pybind11.h>

namespace taskring::py {

void bind_trace(pybind11::module_& m);

}  // namespace taskring::py
