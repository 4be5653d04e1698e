#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

#include "commands.hpp"
#include "taskring/kernels/tile_matmul.hpp"
#include "taskring/log/init.hpp"

namespace taskring::cli {

// OpenBLAS chose its kernels by CPU model when the binary loaded, and a model
// it does not know gets its generic SSE3 set: on an Emerald Rapids Xeon a
// 4x64x64 sgemm took 2.0 us instead of 0.22 us with the SkylakeX set.
// OPENBLAS_CORETYPE is read only while the library loads, so the tool sets it
// and runs itself again, once; a user's own OPENBLAS_CORETYPE always wins.
// Returns only when nothing was replaced (or the exec failed: the run goes on
// with the generic kernels, and `taskring info` says so).
void use_better_blas_kernels(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr || std::getenv(kBlasReplacedEnv) != nullptr) return;
  const tile::BlasInfo b = tile::blas_info();
  if (b.better_core.empty()) return;
  setenv("OPENBLAS_CORETYPE", b.better_core.c_str(), 1);
  setenv(kBlasReplacedEnv, b.core.c_str(), 1);
  std::fflush(nullptr);
  execv("/proc/self/exe", argv);
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv(kBlasReplacedEnv);
}

// A report that could not be written is a failure whatever the command
// decided (`> /dev/full`): flush both streams and check their error state.
int with_output_checked(int rc) {
  std::cout.flush();
  bool failed = !std::cout.good();
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) failed = true;
  if (!failed) return rc;
  const int err = errno;
  std::fprintf(stderr, "taskring: could not write the output to stdout%s%s\n", err ? ": " : "",
               err ? std::strerror(err) : "");
  return rc == 0 ? 1 : rc;
}

}  // namespace taskring::cli

int main(int argc, char** argv) {
  taskring::cli::use_better_blas_kernels(argv);
  CLI::App app{"taskring: task-graph runtime for tile accelerators (default device: sim)"};
  app.require_subcommand(1);
  namespace cli = taskring::cli;
  const std::vector<cli::Command> commands = {
      cli::add_info_command(app),  cli::add_selfcheck_command(app), cli::add_bench_command(app),
      cli::add_trace_command(app), cli::add_run_command(app),       cli::add_orch_command(app),
  };
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
    return cli::with_output_checked(rc == 0 ? 0 : 2);
  }
  // Runs only after the whole command line parsed, so a typo anywhere on it
  // is reported before any work starts.
  for (const cli::Command& c : commands) {
    if (c.app->parsed()) return cli::with_output_checked(c.run());
  }
  return cli::with_output_checked(2);  // unreachable: require_subcommand(1)
}
