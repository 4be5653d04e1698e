#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "taskring/log/init.hpp"
#include <cstdio>

namespace taskring::cli {
namespace {
// The one process-wide exit status of the tool; set by the subcommand that ran.
int g_exit_code = 0;
}  // namespace
void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }
}  // namespace taskring::cli

int main(int argc, char** argv) {
  CLI::App app{"taskring: task-graph runtime for tile accelerators (default device: sim)"};
  app.require_subcommand(1);
  taskring::cli::add_info_command(app);
  taskring::cli::add_selfcheck_command(app);
  taskring::cli::add_bench_command(app);
  taskring::cli::add_trace_command(app);
  taskring::cli::add_run_command(app);
  taskring::cli::add_orch_command(app);
  // Logger threshold and span files come from the environment, once, before
  // any subcommand forks ranks.
  taskring::Status log_status = taskring::log::init_logging(taskring::process_env());
  if (!log_status.ok()) {
    std::fprintf(stderr, "taskring: %s\n", log_status.to_string().c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return taskring::cli::exit_code();
}
