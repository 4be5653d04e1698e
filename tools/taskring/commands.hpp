// Subcommands of the `taskring` tool. Each lives in its own <name>_command.cpp
// and registers itself on the app; main.cpp only lists them. A subcommand's
// callback sets the process exit status through `set_exit_code` (0 success,
// 2 usage error, 3 missing or torn data, 1 any other failure).
#pragma once

#include <CLI/CLI.hpp>

namespace taskring::cli {

void set_exit_code(int code);
int exit_code();

void add_info_command(CLI::App& app);
void add_selfcheck_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_trace_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_orch_command(CLI::App& app);

}  // namespace taskring::cli
