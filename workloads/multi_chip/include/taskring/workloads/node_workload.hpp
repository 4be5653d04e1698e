// NodeWorkload: a reference L3 workload (several chips + SUB workers) with a
// golden check, runnable on a NodeWorker.
//
//   auto w = make_node_workload("multi_chip");     // parameters at defaults
//   (*w)->params().set("chips", 8);                 // from flags
//   TASKRING_RETURN_IF_ERROR((*w)->validate());
//   NodeWorker node((*w)->node_config());
//   TASKRING_RETURN_IF_ERROR((*w)->register_callables(node));  // before init
//   TASKRING_RETURN_IF_ERROR(node.init());
//   TASKRING_RETURN_IF_ERROR((*w)->setup(node));   // inputs + reference in the shared heap
//   for (each round) { (*w)->reset_output(); node.run((*w)->orchestration()); (*w)->check(); }
//
// The parameter "chips" exists in every node workload (the CLI's --chips).
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "taskring/node/node_worker.hpp"
#include "taskring/workloads/golden.hpp"
#include "taskring/workloads/params.hpp"

namespace taskring::workloads {

class NodeWorkload {
 public:
  virtual ~NodeWorkload() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view summary() const = 0;
  ParamSet& params() { return params_; }

  // Checks the parameters together (INVALID_ARGUMENT naming the rule).
  virtual Status validate() const = 0;
  // L4 (taskring run --nodes): this process's node among `nodes`, before
  // node_config() and setup(). Most workloads run independently on every
  // node; one that spans nodes (moe: one comm domain over every node's
  // chips) uses it. INVALID_ARGUMENT when the parameters do not fit.
  virtual Status place(int node, int nodes) {
    (void)node;
    (void)nodes;
    return Status::Ok();
  }
  // The node this workload needs (chips, SUB workers, heap sizes).
  virtual node::NodeConfig node_config() const = 0;
  // Registers its chip and SUB callables. Before NodeWorker::init().
  virtual Status register_callables(node::NodeWorker& node) = 0;
  // Allocates inputs and outputs in the shared heap and builds the
  // reference. After init().
  virtual Status setup(node::NodeWorker& node) = 0;
  // Zeroes the output, so a run that writes nothing fails the golden.
  virtual void reset_output() = 0;
  // The orchestration of one round.
  virtual node::OrchFunction orchestration() = 0;
  virtual Status check(GoldenStats* stats = nullptr) const = 0;
  // Node tasks one round submits.
  virtual uint64_t expected_tasks() const = 0;
  // `chip.run` spans each chip emits per round (chip tasks per chip), for the
  // bench matrix.
  virtual uint64_t chip_runs_per_round() const { return 1; }

 protected:
  ParamSet params_;
};

struct NodeCatalogEntry {
  std::string_view name;
  std::unique_ptr<NodeWorkload> (*make)();
};

std::span<const NodeCatalogEntry> node_catalog();
// NOT_FOUND listing the known names when `name` is not a node workload.
Expected<std::unique_ptr<NodeWorkload>> make_node_workload(std::string_view name);

std::unique_ptr<NodeWorkload> make_multi_chip_workload();
std::unique_ptr<NodeWorkload> make_pipeline_workload();
std::unique_ptr<NodeWorkload> make_moe_workload();

}  // namespace taskring::workloads
