// dsv4 on the L3 node (`taskring run dsv4 --chips N`): see
// workloads/dsv4/dsv4_node_workload.cpp and docs/dsv4.md.
#pragma once

#include <memory>
#include <span>

#include "taskring/workloads/node_workload.hpp"

namespace taskring::workloads {

// The routed experts split over the chips (EP = chips), the LM head split by
// columns (TP = chips) and gathered; one Graph per decoder layer per chip.
// comm 1 (default): one group task per step over a comm domain (dispatch /
// combine / allgather kernels); comm 0: one node step per layer, the host
// combining the chips' routed partials.
class Dsv4NodeWorkload : public NodeWorkload {
 public:
  // The gathered logits [batch, vocab] of the last round (empty before
  // setup()): what check() compares with the reference.
  virtual std::span<const float> logits() const = 0;
};

std::unique_ptr<Dsv4NodeWorkload> make_dsv4_node();
// The same, as the node catalog's entry.
std::unique_ptr<NodeWorkload> make_dsv4_node_workload();

}  // namespace taskring::workloads
