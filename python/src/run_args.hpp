// Python run arguments -> ChipTaskArgs: (array, tag) pairs, _Tensor views
// over arrays or device buffers, and Python / numpy scalars.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <vector>

#include "arrays.hpp"
#include "worker_state.hpp"

namespace taskring::py {

// Converts `args` into `cargs`, using st.tensors as descriptor storage (so
// the caller holds st.mu). Every tensor argument object is appended to
// `keep`, so that its memory outlives the run even if another thread drops
// the caller's list while the GIL is released. Raises on any bad argument,
// naming its index. `node`: for a node task, what else it may name
// (NodeArgContext); nullptr (L2) refuses Orchestrator.alloc tensors and chip
// buffers.
// The DEVICE tensor over chip buffer `b` that a node task on node->chip
// names: raises (naming `what`) unless `node` is set, `b` belongs to that
// node, is not freed, and is on that chip.
ChipTensor child_tensor(const PyChildBuffer& b, const ViewSpec& view, const NodeArgContext* node, const ArgName& what);

void bind_run_args(WorkerState& st, const pybind11::sequence& args, ChipTaskArgs& cargs,
                   std::vector<pybind11::object>& keep, const NodeArgContext* node = nullptr);

}  // namespace taskring::py
