// L2 from Python: _Callable, _ChipWorker, _DeviceBuffer and _Tensor.
#pragma once

#include <pybind11/pybind11.h>

namespace taskring::py {

void bind_chip(pybind11::module_& m);

}  // namespace taskring::py
