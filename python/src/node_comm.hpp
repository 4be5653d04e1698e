// Comm domains and the built-in collectives from a Python orch function:
// _CommDomain (one domain, as the C++ Orchestrator allocated it) and the
// calls _NodeOrchestrator makes for allocate_domain and the collectives.
// taskring/comm.py wraps them in upstream's CommDomainHandle shape.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "taskring/node/comm_domain.hpp"
#include "taskring/node/orchestrator.hpp"

namespace taskring::py {

struct PyCommDomain {
  std::shared_ptr<node::CommDomain> d;
};

// Orchestrator::allocate_domain; `buffers` are (name, bytes) pairs. Raises
// the C++ call's error (validation happens there, before any allocation).
PyCommDomain allocate_domain(node::Orchestrator& o, const std::string& name, const std::vector<int>& workers,
                             uint64_t window_size, const std::vector<std::pair<std::string, uint64_t>>& buffers);

// One collective as a group task over `d`, rank i on d.chips()[i]: `op` is
// "allreduce", "allgather", "reduce_scatter", "broadcast" or "all_to_all";
// `ins` / `outs` are lists or tuples, item i rank i's array (broadcast:
// `ins` only, INOUT, and named "buffers" in errors; `outs` is not read).
// `dtype` (a taskring DataType value, or -1 for the arrays' own) lets a
// uint16 array be BFLOAT16. `algo`: "one_phase", "ring", "direct", "auto"
// (allreduce only). Raises naming the argument or the C++ call's rule.
// Each entry of `ins` / `outs` is a shared array or, for a chip that keeps
// its data, a chip buffer (PyChildBuffer) of that rank's chip and of the
// node whose state is `node`.
void submit_collective(node::Orchestrator& o, int comm_call, const PyCommDomain& d, const std::string& op,
                       pybind11::handle ins, pybind11::handle outs, int dtype, const std::string& algo, int root,
                       const std::string& scratch, const std::shared_ptr<void>& node);

// _CommDomain and _collective_scratch_bytes.
void bind_comm(pybind11::module_& m);

}  // namespace taskring::py
