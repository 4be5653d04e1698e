// The L3 node from Python: _NodeWorker (chips and SUB children forked from
// this interpreter), _NodeOrchestrator (valid inside one orch function) and
// _NodeRunHandle.
//
// The interpreter forks: init() runs with the GIL held, between
// PyOS_BeforeFork and PyOS_AfterFork_Parent, and every child calls
// PyOS_AfterFork_Child first, as os.fork() does. A SUB child then runs the
// registered Python function on views of the shared heap; a chip child never
// runs Python.
#pragma once

#include <pybind11/pybind11.h>

namespace taskring::py {

void bind_node(pybind11::module_& m);

}  // namespace taskring::py
