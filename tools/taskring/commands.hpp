// Subcommands of the `taskring` tool. Each lives in its own <name>_command.cpp
// and registers itself on the app; main.cpp only lists them. A subcommand's
// callback sets the process exit status through `set_exit_code` (0 success,
// 2 usage error, 3 missing or torn data, 1 any other failure).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace taskring::workloads {
class NodeWorkload;
}

namespace taskring::cli {

void set_exit_code(int code);
int exit_code();

void add_info_command(CLI::App& app);
void add_selfcheck_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_trace_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_orch_command(CLI::App& app);

// The node (L3) forms, node_command.cpp. `run` adds one subcommand per node
// workload, reading its --rounds/--warmup/--runtime through the pointers.
void add_node_run_subcommands(CLI::App* run, const int* rounds, const int* warmup, const std::string* runtime);
bool node_run_parsed();
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
  int nodes = 0;  // > 0: L4 over MPI ranks (net_command.cpp), under mpirun -np nodes
};
// Returns the exit status (0 every cell valid, 2 usage, 3 missing/torn, 1 failure).
int run_node_bench(const NodeBenchOptions& o);

// Shared by the L3 and L4 benches (node_command.cpp): the workload with
// --chips applied, or nullptr after printing why (a usage error); and the
// validation of captured spans as a (chip rank, round) matrix of `ranks`
// ranks, printed as a table or JSON (the exit status: 0, 1 invalid cells,
// 3 no matrix).
std::unique_ptr<workloads::NodeWorkload> prepare_node_bench(const NodeBenchOptions& o);
int validate_chip_matrix(const std::string& captured, std::string_view source, int ranks, const NodeBenchOptions& o);

// The L4 forms (net_command.cpp; net_command_stub.cpp without MPI), run by
// every rank under `mpirun -np nodes`. Same exit statuses.
int run_net_rounds(workloads::NodeWorkload& w, const std::string& runtime, int nodes, int warmup, int rounds);
int run_net_bench(const NodeBenchOptions& o);

}  // namespace taskring::cli
