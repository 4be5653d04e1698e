// Per-task overhead of oneTBB, two columns from one binary:
//   tbb        : dynamic, per run. Dependency patterns build a flow::graph
//                (nodes + make_edge from precomputed edges), run it once; the
//                independent pattern uses a task_group. Graph destruction untimed.
//   tbb-replay : static graph replay (issue 6). The flow graph of each pattern
//                (independent: unconnected nodes) is built once, untimed; each
//                repetition re-runs it (try_put to roots + wait_for_all).
//   tbb-replay-1k: the same with a 1024-node graph (the size limit of one
//                taskring Graph Definition), replayed back to back tasks/1024
//                times per repetition, so it stays cache-resident like a
//                replayed layer does.
// Edges come from peers::infer_edges outside the timed region: flow graph users
// state edges explicitly, so no inference cost is charged to oneTBB.
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_group.h>
#include <oneapi/tbb/version.h>

#include <algorithm>
#include <memory>
#include <string>

#include "common/counter.hpp"
#include "common/harness.hpp"
#include "taskring/base/clock.hpp"
#include "tbb/flow_graph.hpp"

namespace {

using peers::Pattern;

uint64_t run_task_group(std::size_t n) {
  uint64_t t0 = taskring::mono_ns();
  tbb::task_group tg;
  for (std::size_t i = 0; i < n; ++i) tg.run([] { peers::task_body(); });
  tg.wait();
  return taskring::mono_ns() - t0;
}

peers::Rep prepare_dynamic(Pattern p, std::size_t n) {
  if (p == Pattern::independent) return {[n] { return run_task_group(n); }, {{"api", "task_group"}}, {}};
  auto edges = std::make_shared<peers::Edges>(peers::infer_edges(p, n));
  nlohmann::json extra = {{"api", "flow::graph built per run"}, {"edges", edges->count()}};
  return {[edges, n] {
            uint64_t t0 = taskring::mono_ns();
            auto g = std::make_unique<peers::FlowGraph>(*edges, n);
            g->run();
            uint64_t t1 = taskring::mono_ns();
            g.reset();  // destruction is not timed
            return t1 - t0;
          },
          extra,
          {}};
}

peers::Rep prepare_replay(Pattern p, std::size_t n, std::size_t replays) {
  peers::Edges edges = peers::infer_edges(p, n);
  uint64_t t0 = taskring::mono_ns();
  auto g = std::make_shared<peers::FlowGraph>(edges, n);
  uint64_t build_ns = taskring::mono_ns() - t0;
  nlohmann::json extra = {{"api", "flow::graph built once, replayed"},
                          {"edges", edges.count()},
                          {"roots", g->roots()},
                          {"graph_nodes", n},
                          {"replays_per_rep", replays},
                          {"build_ns_per_node", static_cast<double>(build_ns) / static_cast<double>(n)}};
  return {[g, replays] {
            uint64_t s = taskring::mono_ns();
            for (std::size_t r = 0; r < replays; ++r) g->run();
            return taskring::mono_ns() - s;
          },
          extra, [g]() mutable { g.reset(); }, n * replays};
}

}  // namespace

int main(int argc, char** argv) {
  peers::Options opts = peers::parse_options(argc, argv, "oneTBB per-task overhead and static graph replay",
                                                     {"tbb", "tbb-replay", "tbb-replay-1k"});
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(opts.threads));
  peers::RuntimeInfo info;
  info.version = std::string("oneTBB ") + TBB_VERSION_STRING + " (runtime " + TBB_runtime_version() + ")";
  info.config = {{"max_allowed_parallelism", opts.threads}, {"node_policy", "continue_node, default (queueing spawn)"}};
  info.runtime = "tbb";
  int bad = peers::run_patterns(opts, info, prepare_dynamic);
  info.runtime = "tbb-replay";
  bad += peers::run_patterns(opts, info, [](Pattern p, std::size_t n) { return prepare_replay(p, n, 1); });
  info.runtime = "tbb-replay-1k";
  bad += peers::run_patterns(opts, info, [](Pattern p, std::size_t n) {
    constexpr std::size_t kNodes = 1024;
    return prepare_replay(p, kNodes, std::max<std::size_t>(1, n / kNodes));
  });
  return bad ? 1 : 0;
}
