// _taskring: the compiled half of the `taskring` Python package. Users import
// `taskring`; the names here (all underscored) are its implementation.
#include <pybind11/pybind11.h>

#include "arrays.hpp"
#include "callables.hpp"
#include "chip.hpp"
#include "errors.hpp"
#include "node.hpp"
#include "node_comm.hpp"
#include "trace.hpp"

PYBIND11_MODULE(_taskring, m) {
  m.doc() = "taskring C++ runtime bindings (use the `taskring` package)";
  taskring::py::bind_errors(m);
  taskring::py::bind_arrays(m);
  taskring::py::bind_callables(m);
  taskring::py::bind_chip(m);
  taskring::py::bind_node(m);
  taskring::py::bind_comm(m);
  taskring::py::bind_trace(m);
}
