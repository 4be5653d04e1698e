// `taskring bench <workload> --ranks R --rounds N --warmup W`: forks R ranks,
// each running the workload on its own sim chip, all writing their spans to
// one shared pipe (the captured-stderr setup of the seed bug report), then
// validates the captured stream with the trace analyser: every expected
// (rank, round) cell must be present and intact, or the run exits 3.
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "taskring/base/clock.hpp"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/log/logger.hpp"
#include "taskring/log/strace.hpp"
#include "taskring/trace/invocations.hpp"
#include "taskring/trace/matrix.hpp"
#include "taskring/trace/parser.hpp"
#include "taskring/trace/report.hpp"
#include "taskring/workloads/catalog.hpp"
#include "taskring/workloads/round.hpp"

namespace taskring::cli {
namespace {

struct BenchOptions {
  std::string workload;
  int ranks = 8;
  int chips = 8;  // node workloads (node_command.cpp)
  int rounds = 8;
  int warmup = 2;
  bool json = false;
  std::string log_path;
  uint64_t timeout_ms = 600000;
};

// One rank: runs warmup + rounds on its own worker; returns the exit code.
int run_rank(const BenchOptions& o, int rank) {
  auto w = workloads::make_workload(o.workload);
  if (!w.ok()) return 2;
  if (!(*w)->setup().ok()) return 1;
  EnvLookup base = process_env();
  std::string rank_text = std::to_string(rank);
  ChipWorkerConfig c;
  c.env = [base, rank_text](std::string_view name) -> std::optional<std::string> {
    if (name == "TASKRING_RANK") return rank_text;
    return base(name);
  };
  auto worker = ChipWorker::create(c);
  if (!worker.ok()) {
    TR_LOG_ERROR("rank %d: %s", rank, worker.status().to_string().c_str());
    return 1;
  }
  auto id = (*worker)->register_callable((*w)->callable());
  if (!id.ok()) return 1;
  for (int r = 0; r < o.warmup + o.rounds; ++r) {
    auto res = workloads::run_round(**worker, *id, **w);
    if (!res.ok() || !res->golden.ok()) {
      TR_LOG_ERROR("rank %d round %d: %s", rank, r,
                   res.ok() ? res->golden.to_string().c_str() : res.status().to_string().c_str());
      return 1;
    }
  }
  log::strace::flush_strace();
  return 0;
}

void run_bench(const BenchOptions& o) {
  if (o.ranks < 1 || o.rounds < 1 || o.warmup < 0) {
    std::fprintf(stderr, "taskring bench: --ranks and --rounds must be >= 1, --warmup >= 0\n");
    set_exit_code(2);
    return;
  }
  if (auto probe = workloads::make_workload(o.workload); !probe.ok()) {
    std::fprintf(stderr, "taskring bench: %s\n", probe.status().to_string().c_str());
    set_exit_code(2);
    return;
  }
  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("taskring bench: pipe");
    set_exit_code(1);
    return;
  }
  std::fflush(nullptr);
  std::vector<pid_t> children;
  for (int r = 0; r < o.ranks; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      dup2(fds[1], 2);  // every rank writes to the one shared "stderr"
      close(fds[1]);
      log::set_output_fd(2);
      _exit(run_rank(o, r));
    }
    if (pid < 0) {
      std::perror("taskring bench: fork");
      break;
    }
    children.push_back(pid);
  }
  close(fds[1]);
  std::string captured;
  char buf[65536];
  Deadline deadline = Deadline::after_ms(o.timeout_ms);
  bool timed_out = false;
  while (true) {
    pollfd p{fds[0], POLLIN, 0};
    int left = static_cast<int>(std::min<uint64_t>(deadline.remaining_ns() / 1000000, 1000));
    if (deadline.expired()) {
      timed_out = true;
      break;
    }
    int n = poll(&p, 1, left);
    if (n <= 0) continue;
    ssize_t got = read(fds[0], buf, sizeof(buf));
    if (got <= 0) break;
    captured.append(buf, static_cast<size_t>(got));
  }
  close(fds[0]);
  int failed_ranks = 0;
  for (pid_t pid : children) {
    if (timed_out) kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed_ranks;
  }
  if (!o.log_path.empty()) std::ofstream(o.log_path, std::ios::binary) << captured;

  trace::Trace t = trace::parse_trace(captured, "<ranks' shared stderr>");
  trace::StageNames names;
  auto invs = trace::group_invocations(t, names);
  trace::MatrixOptions mo;
  mo.ranks = o.ranks;
  mo.rounds = o.rounds;
  mo.warmup = o.warmup;
  mo.dispatches_per_round = 1;
  auto m = trace::build_matrix(t, invs, names, mo);
  if (!m.ok()) {
    std::fprintf(stderr, "taskring bench: %s\n", m.status().to_string().c_str());
    set_exit_code(3);
    return;
  }
  std::cout << (o.json ? trace::render_json(t, *m) : trace::render_matrix(t, *m));
  int rc = trace::verdict_exit_code(t, *m);
  if (timed_out) std::fprintf(stderr, "taskring bench: ranks did not finish within %llu ms\n",
                              static_cast<unsigned long long>(o.timeout_ms));
  if (failed_ranks > 0) std::fprintf(stderr, "taskring bench: %d rank(s) failed (see the log)\n", failed_ranks);
  set_exit_code(rc != 0 ? rc : (failed_ranks > 0 || timed_out) ? 1 : 0);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto opts = std::make_shared<BenchOptions>();
  auto* cmd = app.add_subcommand("bench", "fork ranks running a workload, capture their spans, validate the matrix");
  cmd->add_option("workload", opts->workload, "workload name (taskring run --list)")->required();
  cmd->add_option("--ranks", opts->ranks, "forked ranks (default 8)");
  cmd->add_option("--rounds", opts->rounds, "measured rounds per rank (default 8)");
  cmd->add_option("--warmup", opts->warmup, "warm-up rounds per rank (default 2)");
  cmd->add_option("--log", opts->log_path, "also write the captured stream to this file");
  cmd->add_flag("--json", opts->json, "print the validated matrix as JSON");
  cmd->add_option("--chips", opts->chips, "chip children of a node workload (default 8)");
  cmd->callback([opts] {
    if (is_node_workload(opts->workload)) {
      set_exit_code(run_node_bench(NodeBenchOptions{opts->workload, opts->chips, opts->rounds, opts->warmup,
                                                    opts->json, opts->log_path, opts->timeout_ms}));
      return;
    }
    run_bench(*opts);
  });
}

}  // namespace taskring::cli
