// bench_l4_dispatch: how many tasks per second one orchestrating rank can
// route, by the number of nodes it routes to (issue 36, item 5).
//
// The L4 scheduler is the node engine with one endpoint per rank
// (src/net/net_worker.cpp); here each endpoint is an in-process fake that
// completes a task at its next poll, so the figure is the engine's own
// cost: submit (validation, dependency inference, FIFO), dispatch (a pass
// over every endpoint) and completion, with no transport. Two shapes:
//   independent  tasks with no tensors, round robin over the nodes;
//   tracked      each task INOUT on its node's own buffer (one dependency
//                chain per node), so dependency inference and the
//                completion path of consumers are in the figure.
// Each point is the median of --reps runs of --tasks tasks. Prints a table
// and, with --json FILE, the numbers, the machine and the load average.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dag/engine.hpp"
#include "dag/fake_endpoint.hpp"
#include "latency_stats.hpp"
#include "load_average.hpp"
#include "taskring/base/clock.hpp"
#include "taskring/log/init.hpp"
#include "taskring/tensor/chip_tensor.hpp"

using namespace taskring;
using namespace taskring::node;

namespace {

struct Point {
  int nodes = 0;
  bool tracked = false;
  double us_per_task = 0;  // median over the reps
  double tasks_per_s = 0;
};

// One engine over `nodes` fake endpoints, set up as L4 sets up its own
// (target_word "rank"; the orchestrating and waiting thread drives).
struct FakeCluster {
  explicit FakeCluster(int nodes) : host(static_cast<size_t>(nodes) * kRow) {
    std::vector<std::unique_ptr<Endpoint>> eps;
    for (int i = 0; i < nodes; ++i) eps.push_back(std::make_unique<FakeEndpoint>("rank " + std::to_string(i), &bell));
    EngineConfig ec;
    ec.chip_callables = {"noop"};
    ec.target_word = "rank";
    ec.span_family = "network";
    ec.api = EngineApi{"NetWorker", "", ""};
    ec.waiters_drive = true;
    const auto base = reinterpret_cast<uintptr_t>(host.data());
    const uint64_t bytes = host.size() * sizeof(float);
    ec.host_visible = [base, bytes](uint64_t a, uint64_t n) { return a >= base && a + n <= base + bytes; };
    engine = std::make_unique<Engine>(std::move(ec), std::move(eps), std::vector<std::unique_ptr<Endpoint>>{}, &bell);
    engine->start();
  }
  static constexpr size_t kRow = 16;  // floats per node buffer
  ShmBell bell;
  std::vector<float> host;
  std::unique_ptr<Engine> engine;
};

double one_run_us(FakeCluster& c, int nodes, int tasks, bool tracked) {
  std::vector<ChipTaskArgs> args(static_cast<size_t>(nodes));
  std::vector<ChipTensor> bufs;  // ChipTaskArgs keeps pointers to them: never reallocated
  bufs.reserve(static_cast<size_t>(nodes));
  for (int n = 0; n < nodes; ++n) {
    bufs.push_back(make_tensor_external(c.host.data() + static_cast<size_t>(n) * FakeCluster::kRow,
                                        {static_cast<uint32_t>(FakeCluster::kRow)}, DataType::FLOAT32));
    if (tracked) args[static_cast<size_t>(n)].add_tensor(bufs.back(), TensorArgType::INOUT);
  }
  const uint64_t t0 = mono_ns();
  auto run = c.engine->run_orchestration(
      [&](Orchestrator& o) -> Status {
        for (int i = 0; i < tasks; ++i) {
          const int n = i % nodes;
          TASKRING_RETURN_IF_ERROR(o.submit_next_level(0, args[static_cast<size_t>(n)], n));
        }
        return Status::Ok();
      },
      nullptr, /*caller_waits=*/true);
  Status s = Engine::wait_run(*run, Deadline::after_ms(600000));
  const double us = static_cast<double>(mono_ns() - t0) / 1000.0;
  if (!s.ok()) {
    std::fprintf(stderr, "bench_l4_dispatch: run failed: %s\n", s.to_string().c_str());
    std::exit(1);
  }
  return us;
}

int usage() {
  std::fprintf(stderr, "usage: bench_l4_dispatch [--tasks N] [--reps N] [--max-nodes N] [--json FILE]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int tasks = 20000, reps = 5, max_nodes = 1024;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto num = [&](int* out) {
      if (i + 1 >= argc) return false;
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < 1 || v > 10'000'000) return false;
      *out = static_cast<int>(v);
      return true;
    };
    if (a == "--tasks") {
      if (!num(&tasks)) return usage();
    } else if (a == "--reps") {
      if (!num(&reps)) return usage();
    } else if (a == "--max-nodes") {
      if (!num(&max_nodes)) return usage();
    } else if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      return usage();
    }
  }
  Status logging = log::init_logging(process_env());
  if (!logging.ok()) {
    std::fprintf(stderr, "bench_l4_dispatch: %s\n", logging.to_string().c_str());
    return 2;
  }
  const std::string load_before = taskring::bench::loadavg();
  std::vector<Point> points;
  for (int nodes = 1; nodes <= max_nodes; nodes *= 4) {
    FakeCluster c(nodes);
    for (bool tracked : {false, true}) {
      std::vector<double> per_task;
      (void)one_run_us(c, nodes, std::min(tasks, 1000), tracked);  // warm-up
      for (int r = 0; r < reps; ++r) per_task.push_back(one_run_us(c, nodes, tasks, tracked) / tasks);
      const double med = taskring::bench::summarise(per_task).median_us;
      points.push_back({nodes, tracked, med, 1e6 / med});
      std::fprintf(stderr, "  %d nodes, %s: %.3f µs/task\n", nodes, tracked ? "tracked" : "independent", med);
    }
  }
  const std::string load_after = taskring::bench::loadavg();
  std::printf("bench_l4_dispatch: %d tasks per run, median of %d runs (loadavg before: %s; after: %s)\n\n", tasks, reps,
              load_before.c_str(), load_after.c_str());
  std::printf("%8s  %-12s %12s %14s\n", "nodes", "shape", "µs/task", "tasks/s");
  for (const Point& p : points)
    std::printf("%8d  %-12s %12.3f %14.0f\n", p.nodes, p.tracked ? "tracked" : "independent", p.us_per_task,
                p.tasks_per_s);
  if (!json_path.empty()) {
    std::ofstream j(json_path);
    j << "{\"bench\":\"l4_dispatch\",\"cpus\":" << std::thread::hardware_concurrency() << ",\"tasks\":" << tasks
      << ",\"reps\":" << reps << ",\"loadavg_before\":\"" << load_before << "\",\"loadavg_after\":\"" << load_after
      << "\",\"points\":[";
    for (size_t i = 0; i < points.size(); ++i)
      j << (i ? "," : "") << "{\"nodes\":" << points[i].nodes << ",\"shape\":\""
        << (points[i].tracked ? "tracked" : "independent") << "\",\"us_per_task\":" << points[i].us_per_task
        << ",\"tasks_per_s\":" << points[i].tasks_per_s << "}";
    j << "]}\n";
  }
  return 0;
}
