// dsv4 on the L3 node (`taskring run dsv4 --chips N`): see
// workloads/dsv4/dsv4_node_workload.cpp and docs/dsv4.md.
#pragma once

#include <memory>

#include "taskring/workloads/node_workload.hpp"

namespace taskring::workloads {

// The routed experts split over the chips (EP = chips), the LM head split by
// columns (TP = chips) and gathered; one Graph per decoder layer per chip.
std::unique_ptr<NodeWorkload> make_dsv4_node_workload();

}  // namespace taskring::workloads
