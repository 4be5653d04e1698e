// A oneTBB flow graph of empty continue_nodes wired from a pattern's inferred
// edges. Construction is the per-run cost of the "tbb" column; `run` alone is
// one replay of the static graph ("tbb-replay").
#pragma once

#include <oneapi/tbb/flow_graph.h>

#include <deque>
#include <vector>

#include "common/counter.hpp"
#include "common/patterns.hpp"

namespace peers {

class FlowGraph {
 public:
  using Node = tbb::flow::continue_node<tbb::flow::continue_msg>;

  FlowGraph(const Edges& e, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      nodes_.emplace_back(graph_, [](const tbb::flow::continue_msg&) {
        task_body();
        return tbb::flow::continue_msg{};
      });
      if (e.offsets[i] == e.offsets[i + 1]) roots_.push_back(&nodes_.back());
      for (uint32_t k = e.offsets[i]; k < e.offsets[i + 1]; ++k)
        tbb::flow::make_edge(nodes_[e.preds[k]], nodes_.back());
    }
  }

  // Puts a message to every root and waits until every node has run once.
  void run() {
    for (Node* r : roots_) r->try_put(tbb::flow::continue_msg{});
    graph_.wait_for_all();
  }

  std::size_t roots() const { return roots_.size(); }

 private:
  tbb::flow::graph graph_;  // declared first: outlives the nodes
  std::deque<Node> nodes_;
  std::vector<Node*> roots_;
};

}  // namespace peers
