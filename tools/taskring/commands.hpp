// Subcommands of the `taskring` tool. Each lives in its own <name>_command.cpp
// and registers itself on the app; main.cpp only lists them and, once the
// whole command line parsed, runs the one that was named.
//
// One option-storage style: a command keeps its options in one struct held by
// a std::shared_ptr that its `run` action captures. CLI11 writes into the
// struct while parsing; the action reads it afterwards. No option lives in a
// global or a function-local static.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "taskring/base/host_speed.hpp"

#include "taskring/workloads/params.hpp"

namespace taskring::workloads {
class NodeWorkload;
}

namespace taskring::cli {

// Set by the tool when it replaced OpenBLAS's generic kernels through
// OPENBLAS_CORETYPE (main.cpp); holds the kernel set it replaced.
inline constexpr char kBlasReplacedEnv[] = "TASKRING_BLAS_REPLACED";

// A registered subcommand and the action that runs it. main.cpp calls `run`
// after parsing, for the subcommand the user named, and exits with what it
// returns: 0 success, 2 usage error, 3 missing or torn data, 1 any other
// failure.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// How a child ended, from its wait status: "killed by signal 9 (SIGKILL)",
// "exited with status 1".
std::string describe_exit(int status);

Command add_info_command(CLI::App& app);
Command add_selfcheck_command(CLI::App& app);
Command add_bench_command(CLI::App& app);
Command add_trace_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_orch_command(CLI::App& app);

// The options of `taskring run` (run_command.cpp), which its node forms share.
struct RunOptions {
  int rounds = 5;
  int warmup = 1;
  bool json = false;
  bool list = false;
  bool profile = false;          // TASKRING_PROFILE=1 for this run
  std::string runtime = "tmr";   // ChipWorkerConfig.runtime: tmr or hbg
  bool skip_device_run = false;  // TASKRING_SKIP_DEVICE_RUN=1 for this run
  std::string sanitize;          // TASKRING_SANITIZE for this run (docs/sanitizer.md)
};

// The node (L3) forms, node_command.cpp. `run` adds one subcommand per node
// workload, which reads --rounds/--warmup/--runtime/--json from `opts`.
// Returns the action that runs the node workload named after `taskring run`
// once the whole command line parsed: its exit status, or -1 when none was
// named.
std::function<int()> add_node_run_subcommands(CLI::App* run, std::shared_ptr<const RunOptions> opts);

// A workload parameter as `--<name> <value>` bound to its storage, range
// checked. A 0/1 parameter is a switch: `--graph on|off` (also 1/0,
// true/false, yes/no) or alone (`--balanced-routing`) for 1.
inline void add_param_option(CLI::App* sub, workloads::Param& p) {
  CLI::Option* opt = sub->add_option("--" + p.name, p.value, p.help);
  if (p.min == 0 && p.max == 1) {
    opt->expected(0, 1)->default_str("1");
    opt->transform(CLI::Transformer(
        std::map<std::string, std::string>{
            {"on", "1"}, {"off", "0"}, {"true", "1"}, {"false", "0"}, {"yes", "1"}, {"no", "0"}},
        CLI::ignore_case));
  } else {
    opt->capture_default_str();
  }
  opt->check(CLI::Range(p.min, p.max));
}

// The node workloads' names, comma-separated (for "known workloads").
std::string node_workload_names();
bool is_node_workload(std::string_view name);
struct NodeBenchOptions {
  std::string workload;
  int chips = 8;
  int rounds = 8;
  int warmup = 2;
  bool json = false;
  std::string log_path;
  uint64_t timeout_ms = 600000;
  // Workload parameters set from flags (--balanced-routing, --param k=v).
  std::vector<std::pair<std::string, int64_t>> params;
  std::string runtime = "tmr";  // the chips' L2 runtime: tmr or hbg
  int nodes = 0;                // > 0: L4 over MPI ranks (net_command.cpp), under mpirun -np nodes
};
// Returns the exit status (0 every cell valid, 2 usage, 3 missing/torn, 1 failure).
int run_node_bench(const NodeBenchOptions& o);

// Shared by the L3 and L4 benches (node_command.cpp): the workload with
// --chips applied, or nullptr after printing why (a usage error); and the
// validation of captured spans as a (chip rank, round) matrix of `ranks`
// ranks, printed as a table or JSON (the exit status: 0, 1 invalid cells,
// 3 no matrix).
// The host-speed control of `taskring bench` (base/host_speed.hpp): the
// first 16 CPUs of the affinity mask, at most ~50 ms in all; empty when the
// probe fails (the bench then reports no host speed).
std::vector<CpuSpeed> probe_bench_host();
std::unique_ptr<workloads::NodeWorkload> prepare_node_bench(const NodeBenchOptions& o);
// `dispatches_per_round` is the workload's chip runs per round. With both
// host probes (probe_bench_host or one per L4 node: taken before the ranks
// started and after they ended) the matrix reports the host's speed
// (trace::set_host_speed); with either empty it reports none.
int validate_chip_matrix(const std::string& captured, std::string_view source, int ranks, int dispatches_per_round,
                         const NodeBenchOptions& o, std::vector<CpuSpeed> host_before = {},
                         std::vector<CpuSpeed> host_after = {});

// The L4 forms (net_command.cpp; net_command_stub.cpp without MPI), run by
// every rank under `mpirun -np nodes`. Same exit statuses.
int run_net_rounds(workloads::NodeWorkload& w, const std::string& runtime, int nodes, int warmup, int rounds);
int run_net_bench(const NodeBenchOptions& o);

}  // namespace taskring::cli
