// Subcommands of the `taskring` tool. Each lives in its own <name>_command.cpp
// and registers itself on the app; main.cpp only lists them. A subcommand's
// callback sets the process exit status through `set_exit_code` (0 success,
// 2 usage error, 3 missing or torn data, 1 any other failure).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>
#include <string_view>

namespace taskring::cli {

void set_exit_code(int code);
int exit_code();

void add_info_command(CLI::App& app);
void add_selfcheck_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_trace_command(CLI::App& app);
void add_run_command(CLI::App& app);

// The node (L3) forms, node_command.cpp. `run` adds one subcommand per node
// workload, reading its --rounds/--warmup/--runtime through the pointers.
void add_node_run_subcommands(CLI::App* run, const int* rounds, const int* warmup, const std::string* runtime,
                              const bool* json, const bool* skip_device_run);

// A 0/1 workload parameter is a switch: also accept on/off, true/false, yes/no.
inline CLI::Transformer on_off_switch() {
  return CLI::Transformer(std::map<std::string, std::string>{{"on", "1"}, {"off", "0"}, {"true", "1"},
                                                             {"false", "0"}, {"yes", "1"}, {"no", "0"}},
                          CLI::ignore_case);
}
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
  std::string runtime = "tmr";             // tmr or hbg
  std::vector<std::string> params;         // "name=value" workload parameters
};
// Returns the exit status (0 every cell valid, 2 usage, 3 missing/torn, 1 failure).
int run_node_bench(const NodeBenchOptions& o);

}  // namespace taskring::cli
