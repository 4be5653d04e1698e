// bench_graph: Graph Execution and the bulk H2D, measured (issue 6).
//
//   bench_graph [--layers 40] [--samples 5] [--replays 64] [--only decode,replay] [--json FILE]
//
// decode (hbg) with Graph off vs on: host-submitted tasks, H2D copies per
// run, host orchestration time, record cost per node, replay cost per call,
// break-even replays; with the sim link model at 17 us + 25 GB/s, the
// control plane (orchestration + uploads) of per-submission upload
// (TASKRING_GRAPH_ARENA_BYTES=0) vs the bulk arena upload. Device-side cost
// per replayed node: a 1024-node layered DAG of empty kernels replayed as a
// Graph on hbg, against the same DAG as a oneTBB flow graph built once and
// replayed (same run, same thread count), and the record cost per node of
// that DAG (first run of a fresh worker). `--only` picks the parts (for
// callgrind: `--only replay` at two --replays counts). Medians over samples.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pto_orchestration_api.h"
#include "taskring/base/clock.hpp"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/workloads/decode.hpp"
#ifdef TASKRING_BENCH_GRAPH_TBB
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>
#endif

namespace {

using taskring::ChipWorker;
using taskring::RunReport;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct DecodeRun {
  RunReport cold, steady;  // first run of a fresh worker, and a later one
  std::vector<double> orch_us, control_us;
};

DecodeRun run_decode(int layers, int graph, int samples, std::map<std::string, std::string> env) {
  DecodeRun r;
  for (int s = 0; s < samples; ++s) {
    auto w = taskring::workloads::make_decode_workload();
    (void)w->params().set("layers", layers);
    (void)w->params().set("graph", graph);
    if (!w->setup().ok()) std::abort();
    taskring::ChipWorkerConfig cfg;
    cfg.runtime = "hbg";
    cfg.env = taskring::map_env(env);
    auto worker = ChipWorker::create(cfg);
    if (!worker.ok()) std::abort();
    int id = *(*worker)->register_callable(w->callable());
    for (int round = 0; round < 3; ++round) {
      ChipTaskArgs args;
      (void)w->bind_args(args);
      auto rep = (*worker)->run(id, args);
      if (!rep.ok() || !w->check().ok()) {
        std::fprintf(stderr, "decode run failed: %s\n", rep.ok() ? "golden" : rep.status().to_string().c_str());
        std::exit(1);
      }
      if (round == 0 && s == 0) r.cold = *rep;
      if (round == 2) {
        r.steady = *rep;
        const auto& g = rep->graph;
        r.orch_us.push_back(g.host_orch_ns / 1e3);
        r.control_us.push_back((g.host_orch_ns + g.graph_upload_ns + g.arena_h2d_ns + g.image_h2d_ns) / 1e3);
      }
    }
  }
  return r;
}

// ---------------------------------------------------------------- replay DAG

constexpr uint32_t kWidth = 32, kDepth = 32;  // 1024 nodes
extern "C" void empty_kernel(int64_t*) {}
int g_replays = 1;

// Node (l, j) writes cell (l, j) and reads cells (l-1, j) and (l-1, j+1).
void dag_body(const GraphTaskArgs& a) {
  const ChipTensor& grid = *a.tensor(0);
  for (uint32_t l = 0; l < kDepth; ++l)
    for (uint32_t j = 0; j < kWidth; ++j) {
      CoreTaskArgs t;
      ChipTensor r0, r1;
      if (l > 0) {
        r0 = grid.view({1, 1}, {l - 1, j});
        r1 = grid.view({1, 1}, {l - 1, (j + 1) % kWidth});
        t.add_input(r0).add_input(r1);
      }
      ChipTensor w = grid.view({1, 1}, {l, j});
      t.add_output(w);
      rt_submit_aiv_task(0, t);
    }
}
void dag_entry(const ChipTaskArgs& args) {
  GraphTaskArgs g;
  g.add_inout(*args.tensor(0));
  for (int i = 0; i < g_replays; ++i) rt_submit_graph(GRAPH_KEY("dag"), dag_body, g);
}

struct ReplayRun {
  std::vector<double> replay_ns_per_node;
  double record_ns_per_node = 0;  // the first run's recording of the DAG
};

ReplayRun taskring_replay(int replays, int samples) {
  g_replays = replays;
  auto worker = ChipWorker::create({.runtime = "hbg"});
  taskring::ChipCallable c;
  c.name = "dag";
  c.entry = dag_entry;
  c.kernels = {{0, empty_kernel, "", "empty"}};
  int id = *(*worker)->register_callable(c);
  std::vector<float> grid(kWidth * kDepth);
  ReplayRun out;
  for (int s = 0; s < samples + 1; ++s) {
    ChipTensor t = make_tensor_external(grid.data(), {kDepth, kWidth});
    ChipTaskArgs args;
    args.add_inout(t);
    auto rep = (*worker)->run(id, args);
    if (!rep.ok()) std::abort();
    if (s == 0) {  // records
      if (rep->graph.nodes_recorded != 0)
        out.record_ns_per_node = static_cast<double>(rep->graph.record_ns) / rep->graph.nodes_recorded;
      continue;
    }
    double ns = static_cast<double>(rep->stats.sched_end_ns - rep->stats.sched_start_ns);
    out.replay_ns_per_node.push_back(ns / (static_cast<double>(replays) * kWidth * kDepth));
  }
  return out;
}

#ifdef TASKRING_BENCH_GRAPH_TBB
std::vector<double> tbb_replay_ns_per_node(int replays, int samples, int threads) {
  namespace flow = oneapi::tbb::flow;
  oneapi::tbb::global_control gc(oneapi::tbb::global_control::max_allowed_parallelism, static_cast<size_t>(threads));
  flow::graph g;
  std::vector<std::unique_ptr<flow::continue_node<flow::continue_msg>>> nodes;
  volatile int sink = 0;
  for (uint32_t i = 0; i < kWidth * kDepth; ++i)
    nodes.push_back(std::make_unique<flow::continue_node<flow::continue_msg>>(
        g, [&sink](const flow::continue_msg&) { sink = sink + 0; }));
  for (uint32_t l = 1; l < kDepth; ++l)
    for (uint32_t j = 0; j < kWidth; ++j) {
      flow::make_edge(*nodes[(l - 1) * kWidth + j], *nodes[l * kWidth + j]);
      flow::make_edge(*nodes[(l - 1) * kWidth + (j + 1) % kWidth], *nodes[l * kWidth + j]);
    }
  std::vector<double> out;
  for (int s = 0; s < samples + 1; ++s) {
    uint64_t t0 = taskring::mono_ns();
    for (int r = 0; r < replays; ++r) {
      for (uint32_t j = 0; j < kWidth; ++j) nodes[j]->try_put(flow::continue_msg());
      g.wait_for_all();
    }
    double ns = static_cast<double>(taskring::mono_ns() - t0);
    if (s > 0) out.push_back(ns / (static_cast<double>(replays) * kWidth * kDepth));
  }
  return out;
}
#endif

std::string loadavg() {
  std::string load;
  std::ifstream f("/proc/loadavg");
  std::getline(f, load);
  return load;
}

// The decode part: Graph off vs on, and the link model's control plane.
nlohmann::json decode_part(int layers, int samples) {
  const std::map<std::string, std::string> none;
  const std::map<std::string, std::string> link = {{"TASKRING_SIM_LINK", "17,25"}};
  const std::map<std::string, std::string> link_per_sub = {{"TASKRING_SIM_LINK", "17,25"},
                                                           {"TASKRING_GRAPH_ARENA_BYTES", "0"}};
  DecodeRun off = run_decode(layers, 0, samples, none);
  DecodeRun on = run_decode(layers, 1, samples, none);
  DecodeRun bulk = run_decode(layers, 1, samples, link);
  DecodeRun per_sub = run_decode(layers, 1, samples, link_per_sub);

  const auto& cg = on.cold.graph;
  const double record_per_node_ns = cg.nodes_recorded ? static_cast<double>(cg.record_ns) / cg.nodes_recorded : 0;
  const double orch_off = median(off.orch_us), orch_on = median(on.orch_us);
  const double per_layer_off_us = orch_off / layers, replay_us = orch_on / layers;
  const double break_even = (per_layer_off_us > replay_us) ? (cg.record_ns / 1e3) / (per_layer_off_us - replay_us) : -1;
  auto graph_copies = [](const RunReport& r) {
    return r.graph.graph_upload_calls + r.graph.arena_h2d_calls + r.graph.image_h2d_calls;
  };
  std::printf("%-44s %14s %14s\n", "", "graph off", "graph on");
  std::printf("%-44s %14llu %14llu\n", "host-submitted tasks", (unsigned long long)off.steady.stats.tasks_submitted,
              (unsigned long long)on.steady.stats.tasks_submitted);
  std::printf("%-44s %14llu %14llu\n", "H2D calls per run (all, steady)", (unsigned long long)off.steady.h2d_calls,
              (unsigned long long)on.steady.h2d_calls);
  std::printf("%-44s %14llu %14llu\n", "  of which runtime copies, first run",
              (unsigned long long)graph_copies(off.cold), (unsigned long long)graph_copies(on.cold));
  std::printf("%-44s %14s %14llu\n", "  Definition uploads, first run", "-",
              (unsigned long long)on.cold.graph.graph_upload_calls);
  std::printf("%-44s %14s %14llu\n", "  submission copies per run", "-",
              (unsigned long long)on.steady.graph.arena_h2d_calls);
  std::printf("%-44s %14.1f %14.1f\n", "host orchestration (us, steady)", orch_off, orch_on);
  std::printf("%-44s %14.1f %14.2f\n", "per layer: ordinary submit / replay (us)", per_layer_off_us, replay_us);
  std::printf("%-44s %14s %14.2f\n", "record cost per node (us, first run)", "-", record_per_node_ns / 1e3);
  std::printf("%-44s %14s %14.2f\n", "break-even replays", "-", break_even);
  std::printf("\nlink model 17 us + 25 GB/s, Graph on: control plane (host_orch + uploads)\n");
  std::printf("%-44s %14.1f us  (%llu submission copies)\n", "per-submission upload (arena off)",
              median(per_sub.control_us), (unsigned long long)per_sub.steady.graph.arena_h2d_calls);
  std::printf("%-44s %14.1f us  (%llu submission copy)\n", "bulk arena upload", median(bulk.control_us),
              (unsigned long long)bulk.steady.graph.arena_h2d_calls);
  std::printf("%-44s %14.1f us vs %.1f us\n", "  submission upload alone (arena_h2d)",
              per_sub.steady.graph.arena_h2d_ns / 1e3, bulk.steady.graph.arena_h2d_ns / 1e3);
  nlohmann::json j;
  j["off"] = {{"host_tasks", off.steady.stats.tasks_submitted},
              {"h2d_calls", off.steady.h2d_calls},
              {"runtime_copies_first_run", graph_copies(off.cold)},
              {"host_orch_us", orch_off}};
  j["on"] = {{"host_tasks", on.steady.stats.tasks_submitted},
             {"h2d_calls", on.steady.h2d_calls},
             {"runtime_copies_first_run", graph_copies(on.cold)},
             {"definition_uploads_first_run", on.cold.graph.graph_upload_calls},
             {"arena_copies", on.steady.graph.arena_h2d_calls},
             {"host_orch_us", orch_on},
             {"record_ns_per_node", record_per_node_ns},
             {"replay_us_per_call", replay_us},
             {"break_even_replays", break_even},
             {"nodes_per_definition", cg.nodes_recorded}};
  j["link_17us_25GBps"] = {{"per_submission_control_us", median(per_sub.control_us)},
                           {"per_submission_copies", per_sub.steady.graph.arena_h2d_calls},
                           {"bulk_control_us", median(bulk.control_us)},
                           {"bulk_copies", bulk.steady.graph.arena_h2d_calls},
                           {"per_submission_arena_h2d_us", per_sub.steady.graph.arena_h2d_ns / 1e3},
                           {"bulk_arena_h2d_us", bulk.steady.graph.arena_h2d_ns / 1e3}};
  return j;
}

// The replay part: the 1024-node DAG on hbg against oneTBB, same threads.
nlohmann::json replay_part(int replays, int samples, int threads) {
  ReplayRun ours = taskring_replay(replays, samples);
  std::vector<double> tbb;
#ifdef TASKRING_BENCH_GRAPH_TBB
  tbb = tbb_replay_ns_per_node(replays, samples, threads);
#endif
  std::printf("\ndevice-side cost per replayed node (1024-node DAG, %d replays/run, empty kernels, %d threads)\n",
              replays, threads);
  std::printf("%-44s %14.1f ns\n", "taskring hbg Graph replay", median(ours.replay_ns_per_node));
  if (!tbb.empty())
    std::printf("%-44s %14.1f ns  (ratio %.2f)\n", "oneTBB flow graph replay", median(tbb),
                median(ours.replay_ns_per_node) / median(tbb));
  else
    std::printf("%-44s %14s\n", "oneTBB flow graph replay", "not built (libtbb-dev missing)");
  std::printf("%-44s %14.2f us\n", "record cost per node (1024-node DAG, first run)", ours.record_ns_per_node / 1e3);
  nlohmann::json j;
  j["replay_ns_per_node"] = {{"taskring_hbg", median(ours.replay_ns_per_node)},
                             {"tbb_flow_graph", tbb.empty() ? -1.0 : median(tbb)}};
  j["dag_record_ns_per_node"] = ours.record_ns_per_node;
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  int layers = 40, samples = 5, replays = 64;
  std::string json_path, only = "decode,replay";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--layers")
      layers = std::atoi(argv[i + 1]);
    else if (a == "--samples")
      samples = std::atoi(argv[i + 1]);
    else if (a == "--replays")
      replays = std::atoi(argv[i + 1]);
    else if (a == "--only")
      only = argv[i + 1];
    else if (a == "--json")
      json_path = argv[i + 1];
    else {
      std::fprintf(stderr,
                   "usage: bench_graph [--layers N] [--samples N] [--replays N] [--only decode,replay] [--json FILE]\n");
      return 2;
    }
  }
  const bool decode = only.find("decode") != std::string::npos, replay = only.find("replay") != std::string::npos;
  const int threads = ChipWorker::create({}).value()->topology().executor_threads;
  std::printf("bench_graph: decode on hbg, %d layers, %d samples (medians); %d executor threads; loadavg at start: %s\n\n",
              layers, samples, threads, loadavg().c_str());
  nlohmann::json j;
  if (decode) j.update(decode_part(layers, samples));
  if (replay) j.update(replay_part(replays, samples, threads));
  const std::string load_after = loadavg();
  std::printf("\nloadavg at the end: %s\n", load_after.c_str());
  if (!json_path.empty()) {
    j["layers"] = layers;
    j["samples"] = samples;
    j["executor_threads"] = threads;
    j["loadavg_end"] = load_after;
    std::ofstream(json_path) << j.dump(2) << "\n";
  }
  return 0;
}
