// The node (L3) forms of `taskring run` and `taskring bench`.
//
// `taskring run <node workload> --chips N [--rounds R] [--warmup W]` builds a
// NodeWorker for the workload (N chip children + its SUB workers), runs
// warmup + measured rounds and checks the golden after each.
// `taskring bench <node workload> --chips N --rounds R --warmup W` forks one
// runner whose stderr (inherited by every chip child) is a pipe, runs the
// rounds there, then validates the captured spans with the trace analyser:
// each chip child emits one `chip.run` per round with rank=<chip index>, so
// the (rank, round) matrix must have N x R valid cells.
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "taskring/base/clock.hpp"
#include "taskring/log/logger.hpp"
#include "taskring/log/strace.hpp"
#include "taskring/trace/capture.hpp"
#include "taskring/trace/invocations.hpp"
#include "taskring/trace/matrix.hpp"
#include "taskring/trace/parser.hpp"
#include "taskring/trace/report.hpp"
#include "taskring/workloads/node_workload.hpp"

namespace taskring::cli {
namespace {

using workloads::NodeWorkload;

// The node forms of `taskring run`: one workload object per node catalog entry
// beside the subcommand that names it (its ParamSet holds the values of the
// workload's flags), and --nodes.
struct NodeRunCommands {
  std::shared_ptr<const RunOptions> run;  // --rounds, --warmup, --runtime, --json of `taskring run`
  int nodes = 0;                          // --nodes: > 0 runs the workload on that many MPI ranks (L4)
  std::vector<std::pair<CLI::App*, std::unique_ptr<NodeWorkload>>> workloads;
};

double ms(uint64_t ns) { return static_cast<double>(ns) / 1e6; }
double mib(uint64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// One row per chip and round: what that chip's runs added up to.
void print_totals_header() {
  std::printf("%-8s %4s %9s %5s %8s %8s %7s %5s %6s %5s %9s %5s %8s %9s %9s %9s  %s\n", "round", "chip", "host_ms",
              "runs", "host_tsk", "executed", "graphs", "defs", "nodes", "h2d", "h2d_MiB", "rt", "rt_MiB", "orch_ms",
              "bind_ms", "device_ms", "golden");
}
void print_totals(const std::string& label, int chip, double host_ms, const node::ChipRunTotals& t,
                  const std::string& golden) {
  std::printf("%-8s %4d %9.3f %5llu %8llu %8llu %7llu %5llu %6llu %5llu %9.3f %5llu %8.3f %9.3f %9.3f %9.3f  %s\n",
              label.c_str(), chip, host_ms, static_cast<unsigned long long>(t.runs),
              static_cast<unsigned long long>(t.tasks_submitted), static_cast<unsigned long long>(t.tasks_executed),
              static_cast<unsigned long long>(t.graph_tasks), static_cast<unsigned long long>(t.definitions_recorded),
              static_cast<unsigned long long>(t.nodes_recorded), static_cast<unsigned long long>(t.h2d_calls),
              mib(t.h2d_bytes), static_cast<unsigned long long>(t.runtime_h2d_calls), mib(t.runtime_h2d_bytes),
              ms(t.orch_ns), ms(t.bind_ns), ms(t.device_ns), golden.c_str());
}
nlohmann::json totals_json(const node::ChipRunTotals& t) {
  return {{"runs", t.runs},
          {"skipped_device_runs", t.skipped_device_runs},
          {"host_submitted_tasks", t.tasks_submitted},
          {"tasks_completed", t.tasks_completed},
          {"tasks_executed", t.tasks_executed},
          {"kernel_tasks", t.kernel_tasks},
          {"host_tasks", t.host_tasks},
          {"graph_tasks", t.graph_tasks},
          {"graph_nodes_run", t.graph_nodes_run},
          {"definitions_recorded", t.definitions_recorded},
          {"nodes_recorded", t.nodes_recorded},
          {"h2d_calls", t.h2d_calls},
          {"h2d_bytes", t.h2d_bytes},
          {"runtime_h2d_calls", t.runtime_h2d_calls},
          {"runtime_h2d_bytes", t.runtime_h2d_bytes},
          {"submission_h2d_calls", t.submission_h2d_calls},
          {"upload_ns", t.upload_ns},
          {"d2h_calls", t.d2h_calls},
          {"d2h_bytes", t.d2h_bytes},
          {"orch_ns", t.orch_ns},
          {"bind_ns", t.bind_ns},
          {"device_ns", t.device_ns},
          {"run_ns", t.run_ns}};
}

// Builds the node, runs warmup + rounds; `print` reports each round (as a
// table, or as JSON on stdout when `json`). Returns the exit status (0 all
// passed, 1 failure, 2 bad parameters). Under TASKRING_SKIP_DEVICE_RUN the
// chips execute nothing, so the golden is reported as skipped.
// `after_round` (if set) runs after every round, once nothing of it runs.
int run_node_rounds(NodeWorkload& w, const std::string& runtime, int warmup, int rounds, bool print, bool json = false,
                    const std::function<void()>& after_round = {}) {
  const std::string who = "taskring run " + std::string(w.name());
  Status v = w.validate();
  if (!v.ok()) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), v.to_string().c_str());
    return 2;
  }
  node::NodeConfig cfg = w.node_config();
  cfg.runtime = runtime;
  node::NodeWorker node(cfg);
  Status s = w.register_callables(node);
  if (s.ok()) s = node.init();
  if (s.ok()) s = w.setup(node);
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), s.to_string().c_str());
    return 1;
  }
  const bool table = print && !json;
  if (table) {
    std::printf("%s: %d chips, %d SUB workers, runtime %s, %llu node tasks per round (%s)\n", who.c_str(), cfg.chips,
                cfg.sub_workers, runtime.c_str(), static_cast<unsigned long long>(w.expected_tasks()),
                w.params().describe().c_str());
    std::printf(
        "  per chip and round: runs = chip runs, host_tsk = host-submitted tasks, executed = kernel tasks "
        "run (Graph nodes included), graphs = GRAPH tasks, defs/nodes = Definitions and nodes recorded, "
        "h2d = all copies to the device, rt = of which the runtime's (Definitions, submission images, task "
        "image)\n\n");
    print_totals_header();
  }
  // Totals of chip runs before the first round (setup) are not a round's.
  for (int c = 0; c < cfg.chips; ++c) (void)node.take_chip_run_totals(c);
  nlohmann::json jrounds = nlohmann::json::array();
  int passed = 0;
  for (int i = 0; i < warmup + rounds; ++i) {
    w.reset_output();
    const uint64_t t0 = mono_ns();
    s = node.run(w.orchestration(), Deadline::after_ms(600000));
    const double host_ms = static_cast<double>(mono_ns() - t0) / 1e6;
    if (after_round) after_round();
    if (!s.ok()) {
      std::fprintf(stderr, "%s: round %d: %s\n", who.c_str(), i, s.to_string().c_str());
      (void)node.close();
      return 1;
    }
    std::vector<node::ChipRunTotals> per_chip;
    bool skipped = false;
    for (int c = 0; c < cfg.chips; ++c) {
      auto t = node.take_chip_run_totals(c);
      per_chip.push_back(t.ok() ? *t : node::ChipRunTotals{});
      skipped |= per_chip.back().skipped_device_runs > 0;
    }
    workloads::GoldenStats g;
    Status golden = skipped ? Status::Ok() : w.check(&g);
    const std::string verdict = skipped ? "skipped" : golden.ok() ? "PASS" : "FAIL";
    const std::string label = i < warmup ? "warm" + std::to_string(i) : std::to_string(i - warmup + 1);
    if (table)
      for (int c = 0; c < cfg.chips; ++c) print_totals(label, c, host_ms, per_chip[static_cast<size_t>(c)], verdict);
    if (json) {
      nlohmann::json chips = nlohmann::json::array();
      for (const auto& t : per_chip) chips.push_back(totals_json(t));
      jrounds.push_back(
          {{"round", label},
           {"warmup", i < warmup},
           {"host_run_ns", static_cast<uint64_t>(host_ms * 1e6)},
           {"golden",
            {{"status", verdict}, {"max_abs_err", g.max_abs_err}, {"message", golden.ok() ? "" : golden.message()}}},
           {"chips", chips}});
    }
    if (!golden.ok()) std::fprintf(stderr, "%s: %s\n", who.c_str(), golden.to_string().c_str());
    if (i >= warmup && golden.ok()) ++passed;
  }
  Status c = node.close();
  if (!c.ok()) std::fprintf(stderr, "%s: %s\n", who.c_str(), c.to_string().c_str());
  if (table) std::printf("\n%d of %d measured rounds passed\n", passed, rounds);
  if (json) {
    nlohmann::json params = nlohmann::json::object();
    for (const workloads::Param& p : w.params().entries()) params[p.name] = p.value;
    std::cout << nlohmann::json{{"workload", std::string(w.name())},
                                {"runtime", runtime},
                                {"chips", cfg.chips},
                                {"params", params},
                                {"node_tasks_per_round", w.expected_tasks()},
                                {"rounds", jrounds},
                                {"passed", passed == rounds && c.ok()}}
                     .dump(2)
              << "\n";
  }
  return passed == rounds && c.ok() ? 0 : 1;
}

}  // namespace

std::function<int()> add_node_run_subcommands(CLI::App* run, std::shared_ptr<const RunOptions> opts) {
  auto node = std::make_shared<NodeRunCommands>();
  node->run = std::move(opts);
  for (const workloads::NodeCatalogEntry& e : workloads::node_catalog()) {
    std::unique_ptr<NodeWorkload> w = e.make();
    auto* sub = run->add_subcommand(std::string(e.name), std::string(w->summary()));
    sub->fallthrough();
    for (workloads::Param& p : w->params().entries()) {
      add_param_option(sub, p);
    }
    sub->add_option("--nodes", node->nodes, "L4: run on this many nodes (MPI ranks); start under mpirun -np N")
        ->check(CLI::Range(1, 256));
    node->workloads.emplace_back(sub, std::move(w));
  }
  // Called by `run`'s action after it refused unknown options and stray
  // arguments, so a typo (`--chip 8`) is reported before any round runs.
  return [node]() -> int {
    for (auto& [sub, w] : node->workloads) {
      if (!sub->parsed()) continue;
      const RunOptions& o = *node->run;
      std::string rt = o.runtime == "tensormap_and_ringbuffer" ? "tmr"
                       : o.runtime == "host_build_graph"       ? "hbg"
                                                               : o.runtime;
      // The chips read their knobs from the environment at init.
      if (o.skip_device_run) setenv("TASKRING_SKIP_DEVICE_RUN", "1", 1);
      if (!o.sanitize.empty()) setenv("TASKRING_SANITIZE", o.sanitize.c_str(), 1);  // each chip child checks its tasks
      if (node->nodes > 0) return run_net_rounds(*w, rt, node->nodes, o.warmup, o.rounds);
      return run_node_rounds(*w, rt, o.warmup, o.rounds, true, o.json);
    }
    return -1;
  };
}

std::string node_workload_names() {
  std::string names;
  for (const workloads::NodeCatalogEntry& e : workloads::node_catalog())
    names += (names.empty() ? "" : ", ") + std::string(e.name);
  return names;
}

bool is_node_workload(std::string_view name) {
  for (const workloads::NodeCatalogEntry& e : workloads::node_catalog())
    if (e.name == name) return true;
  return false;
}

std::unique_ptr<NodeWorkload> prepare_node_bench(const NodeBenchOptions& o) {
  auto made = workloads::make_node_workload(o.workload);
  if (!made.ok()) {
    std::fprintf(stderr, "taskring bench: %s\n", made.status().to_string().c_str());
    return nullptr;
  }
  if (o.chips < 1 || o.rounds < 1 || o.warmup < 0 || o.nodes < 0) {
    std::fprintf(stderr, "taskring bench: --chips, --rounds (and --nodes) must be >= 1, --warmup >= 0\n");
    return nullptr;
  }
  Status ps = (*made)->params().set("chips", o.chips);
  if (!ps.ok()) {
    std::fprintf(stderr, "taskring bench: --chips: %s\n", ps.to_string().c_str());
    return nullptr;
  }
  for (const auto& [name, value] : o.params) {
    ps = (*made)->params().set(name, value);
    if (!ps.ok()) {
      std::fprintf(stderr, "taskring bench: --%s: %s\n", name.c_str(), ps.to_string().c_str());
      return nullptr;
    }
  }
  ps = (*made)->validate();
  if (!ps.ok()) {
    std::fprintf(stderr, "taskring bench: %s\n", ps.to_string().c_str());
    return nullptr;
  }
  // The harness owns the span sink, as `taskring bench` does for chip
  // workloads (docs/trace.md): spans at TIMING to the captured stderr,
  // whatever TASKRING_LOG_LEVEL or TASKRING_STRACE_DIR say. Set before the
  // runner and its chips fork, so they inherit it.
  (void)log::strace::set_strace_dir("");
  if (log::threshold() > log::Level::kTiming) log::set_threshold(log::Level::kTiming);
  if (!log::strace::enabled()) {
    std::fprintf(stderr, "taskring bench: spans are disabled (TASKRING_LOG_LEVEL above timing)\n");
    return nullptr;
  }
  return std::move(*made);
}

int validate_chip_matrix(const std::string& captured, std::string_view source, int ranks, int dispatches_per_round,
                         const NodeBenchOptions& o, std::vector<CpuSpeed> host_before,
                         std::vector<CpuSpeed> host_after) {
  trace::Trace t = trace::parse_trace(captured, source);
  trace::StageNames names;
  auto invs = trace::group_invocations(t, names);
  trace::MatrixOptions mo;
  mo.ranks = ranks;
  mo.rounds = o.rounds;
  mo.warmup = o.warmup;
  mo.dispatches_per_round = dispatches_per_round;
  mo.rank_by = trace::RankBy::kAttr;
  auto m = trace::build_matrix(t, invs, names, mo);
  if (!m.ok()) {
    std::fprintf(stderr, "taskring bench: %s\n", m.status().to_string().c_str());
    return 3;
  }
  trace::set_host_speed(*m, std::move(host_before), std::move(host_after));
  std::cout << (o.json ? trace::render_json(t, *m) : trace::render_matrix(t, *m));
  return trace::verdict_exit_code(t, *m);
}

// Prints the last lines of the runner's stderr that are not span records:
// its own error messages and those of its chip children.
void print_runner_messages(const std::string& captured) {
  constexpr size_t kMaxLines = 20;
  std::vector<std::string_view> lines;
  std::string_view rest = captured;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    // Span and clock-anchor records are the harness's data, not messages.
    if (!line.empty() && line.find("[STRACE]") == std::string_view::npos &&
        line.find("[CLOCK_ANCHOR]") == std::string_view::npos) {
      lines.push_back(line);
    }
  }
  if (lines.empty()) {
    std::fprintf(stderr, "taskring bench: the runner wrote no message\n");
    return;
  }
  const size_t first = lines.size() > kMaxLines ? lines.size() - kMaxLines : 0;
  std::fprintf(stderr, "taskring bench: the runner's messages%s:\n", first > 0 ? " (the last 20)" : "");
  for (size_t i = first; i < lines.size(); ++i)
    std::fprintf(stderr, "  %.*s\n", static_cast<int>(lines[i].size()), lines[i].data());
}

int run_node_bench(const NodeBenchOptions& o) {
  std::unique_ptr<NodeWorkload> made = prepare_node_bench(o);
  if (!made) return 2;
  NodeWorkload& w = *made;
  // fds: the runner's stderr. ticks: one byte from the runner after each
  // round, which is when the reader drains fds (trace::capture_stream).
  int fds[2], ticks[2];
  if (pipe(fds) != 0) {
    std::perror("taskring bench: pipe");
    return 1;
  }
  if (pipe(ticks) != 0) {
    std::perror("taskring bench: pipe");
    close(fds[0]);
    close(fds[1]);
    return 1;
  }
  std::vector<CpuSpeed> host_before = probe_bench_host();
  std::fflush(nullptr);
  pid_t runner = fork();
  if (runner < 0) {
    std::perror("taskring bench: fork");
    return 1;
  }
  if (runner == 0) {
    close(fds[0]);
    close(ticks[0]);
    dup2(fds[1], 2);  // the runner, its chip children and SUB workers share this "stderr"
    close(fds[1]);
    const int tick = ticks[1];
    const int rc = run_node_rounds(w, o.runtime, o.warmup, o.rounds, false, false, [tick] {
      const char b = 0;
      (void)!write(tick, &b, 1);
    });
    log::strace::flush_strace();
    _exit(rc);
  }
  close(fds[1]);
  close(ticks[1]);
  // The reader stays out of the chips' way: a scheduling class that never
  // preempts a chip on wake-up (SCHED_BATCH at nice 19), and wake-ups only
  // between rounds (trace::capture_stream). Measured (perf sched): ~130 us
  // of every 8-chip MoE round's window at first, 11 us with the class, 0
  // with the ticks.
  sched_param sp{};
  (void)sched_setscheduler(0, SCHED_BATCH, &sp);
  (void)setpriority(PRIO_PROCESS, 0, 19);
  constexpr uint64_t kBytesPerChipRun = 2048;  // a chip run's span tree is ~1.5 KB
  trace::Captured got = trace::capture_stream(
      fds[0], ticks[0], Deadline::after_ms(o.timeout_ms),
      static_cast<uint64_t>(o.warmup + o.rounds + 1) * static_cast<uint64_t>(o.chips + 1) * kBytesPerChipRun);
  const bool timed_out = got.timed_out;
  const std::string& captured = got.bytes;
  close(ticks[0]);
  close(fds[0]);
  if (timed_out) kill(runner, SIGKILL);  // its children follow (PR_SET_PDEATHSIG)
  int status = 0;
  waitpid(runner, &status, 0);
  const bool runner_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::vector<CpuSpeed> host_after = host_before.empty() ? std::vector<CpuSpeed>{} : probe_bench_host();
  if (!o.log_path.empty()) std::ofstream(o.log_path, std::ios::binary) << captured;

  const int rc =
      validate_chip_matrix(captured, "<node runner's stderr>", o.chips, static_cast<int>(w.chip_runs_per_round()), o,
                           std::move(host_before), std::move(host_after));
  // Why the runner stopped comes first, also when it leaves the matrix
  // invalid (exit 3): an init failure writes one line and no span at all.
  if (timed_out)
    std::fprintf(stderr, "taskring bench: the node runner did not finish within %llu ms\n",
                 static_cast<unsigned long long>(o.timeout_ms));
  if (!runner_ok) {
    const std::string how = WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status)) : describe_exit(status);
    std::fprintf(stderr, "taskring bench: the node runner failed (%s)\n", how.c_str());
    print_runner_messages(captured);
  }
  return rc != 0 ? rc : (!runner_ok || timed_out) ? 1 : 0;
}

}  // namespace taskring::cli
