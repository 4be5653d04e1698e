// `taskring bench <workload> --ranks R --rounds N --warmup W`: forks R ranks,
// each running the workload on its own sim chip, all writing their log
// records (spans included) to one shared pipe (the captured-stderr setup of
// the seed bug report), then validates the captured stream with the trace
// analyser: every expected (rank, round) cell must be present and intact, or
// the run exits 3.
//
// The harness must never call a good run bad nor hide why a run is bad:
//  * it owns its ranks' span sink: whatever TASKRING_LOG_LEVEL or
//    TASKRING_STRACE_DIR say, each rank records spans into the shared pipe;
//  * each rank's own stderr goes to a pipe of its own, whose last lines are
//    printed for a failed rank, named by rank, pid and exit status or signal;
//  * an unwritable --log is a usage error before anything runs;
//  * no rank outlives the parent: PR_SET_PDEATHSIG(SIGKILL), checked against
//    a parent that died before the child set it; on the deadline the parent
//    kills every rank.
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
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
  int nodes = 0;  // node workloads across MPI ranks (net_command.cpp)
  int rounds = 8;
  int warmup = 2;
  bool json = false;
  bool profile = false;  // TASKRING_PROFILE=1 in every rank
  std::string log_path;
  uint64_t timeout_ms = 600000;
  std::string runtime = "tmr";      // node workloads: the chips' L2 runtime
  std::vector<std::string> params;  // node workloads: name=value parameters
  bool balanced = false;            // node workload moe: --balanced-routing
};

// The lines of a failed rank's stderr that are kept and shown.
constexpr size_t kTailLines = 12;
constexpr size_t kTailBytes = 8192;

// One rank: runs warmup + rounds on its own worker; returns the exit code.
// Its errors go to its own stderr (fd 2), which the parent keeps per rank.
int run_rank(const BenchOptions& o, int rank) {
  auto w = workloads::make_workload(o.workload);
  if (!w.ok()) return 2;
  if (Status s = (*w)->setup(); !s.ok()) {
    std::fprintf(stderr, "rank %d: workload setup: %s\n", rank, s.to_string().c_str());
    return 1;
  }
  EnvLookup base = process_env();
  std::string rank_text = std::to_string(rank);
  ChipWorkerConfig c;
  const bool profile = o.profile;
  c.env = [base, rank_text, profile](std::string_view name) -> std::optional<std::string> {
    if (name == "TASKRING_RANK") return rank_text;
    if (profile && name == "TASKRING_PROFILE") return std::string("1");
    return base(name);
  };
  auto worker = ChipWorker::create(c);
  if (!worker.ok()) {
    std::fprintf(stderr, "rank %d: creating the worker: %s\n", rank, worker.status().to_string().c_str());
    return 1;
  }
  auto id = (*worker)->register_callable((*w)->callable());
  if (!id.ok()) {
    std::fprintf(stderr, "rank %d: registering the callable: %s\n", rank, id.status().to_string().c_str());
    return 1;
  }
  Status placed = (*w)->place_on_device(**worker);
  if (!placed.ok()) {
    std::fprintf(stderr, "rank %d: placing inputs on the device: %s\n", rank, placed.to_string().c_str());
    return 1;
  }
  for (int r = 0; r < o.warmup + o.rounds; ++r) {
    auto res = workloads::run_round(**worker, *id, **w);
    if (!res.ok() || !res->golden.ok()) {
      std::fprintf(stderr, "rank %d round %d: %s\n", rank, r,
                   res.ok() ? res->golden.to_string().c_str() : res.status().to_string().c_str());
      return 1;
    }
  }
  log::strace::flush_strace();
  return 0;
}

// The child side of a fork: becomes rank `rank` and never returns.
[[noreturn]] void become_rank(const BenchOptions& o, int rank, pid_t parent, int shared_fd, int err_fd) {
  // Dies with the parent whatever it is doing; a parent that died before
  // this line is caught by the getppid check.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(1);
  dup2(err_fd, 2);
  close(err_fd);
  // The harness owns the span sink: spans go to the shared pipe at TIMING,
  // not to TASKRING_STRACE_DIR files nor filtered by TASKRING_LOG_LEVEL.
  log::set_output_fd(shared_fd);
  (void)log::strace::set_strace_dir("");
  if (log::threshold() > log::Level::kTiming) log::set_threshold(log::Level::kTiming);
  _exit(run_rank(o, rank));
}

struct Rank {
  int index = 0;
  pid_t pid = -1;
  int err_fd = -1;   // read end of the rank's own stderr
  std::string tail;  // its last kTailBytes
  int status = 0;
};

void keep_tail(std::string& tail, const char* data, size_t n) {
  tail.append(data, n);
  if (tail.size() > 2 * kTailBytes) tail.erase(0, tail.size() - kTailBytes);
}

// The last kTailLines lines of `tail`, each prefixed for the report.
std::string last_lines(const std::string& tail) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < tail.size()) {
    size_t nl = tail.find('\n', start);
    if (nl == std::string::npos) nl = tail.size();
    if (nl > start) lines.push_back(tail.substr(start, nl - start));
    start = nl + 1;
  }
  if (lines.empty()) return "    (nothing on its stderr)\n";
  std::string out;
  for (size_t i = lines.size() > kTailLines ? lines.size() - kTailLines : 0; i < lines.size(); ++i) {
    out += "    | " + lines[i] + "\n";
  }
  return out;
}

// Usage errors found before any rank starts: 0, or 2 after printing why.
int check_bench_options(const BenchOptions& o) {
  if (o.ranks < 1 || o.ranks > trace::kMaxRanks || o.rounds < 1 || o.warmup < 0) {
    std::fprintf(stderr, "taskring bench: --ranks must be in [1, %d], --rounds >= 1, --warmup >= 0\n",
                 trace::kMaxRanks);
    return 2;
  }
  if (auto probe = workloads::make_workload(o.workload); !probe.ok()) {
    std::fprintf(stderr, "taskring bench: %s\n", probe.status().to_string().c_str());
    return 2;
  }
  return 0;
}

// The forked ranks, each with its own stderr pipe; `started` < o.ranks when a
// pipe or a fork failed.
struct RankSet {
  std::vector<Rank> ranks;
  bool fork_failed = false;
};

// Forks o.ranks ranks writing their spans to `shared_write`; the parent keeps
// each rank's stderr. `log_fd` (or -1) is closed in the children.
RankSet fork_ranks(const BenchOptions& o, int shared_read, int shared_write, int log_fd) {
  RankSet set;
  const pid_t self = getpid();
  for (int r = 0; r < o.ranks; ++r) {
    int err[2];
    if (pipe2(err, O_CLOEXEC) != 0) {
      std::perror("taskring bench: pipe");
      set.fork_failed = true;
      break;
    }
    pid_t pid = fork();
    if (pid == 0) {
      close(shared_read);
      close(err[0]);
      for (const Rank& k : set.ranks) close(k.err_fd);
      if (log_fd >= 0) close(log_fd);
      become_rank(o, r, self, shared_write, err[1]);
    }
    close(err[1]);
    if (pid < 0) {
      std::perror("taskring bench: fork");
      close(err[0]);
      set.fork_failed = true;
      break;
    }
    set.ranks.push_back({r, pid, err[0], {}, 0});
  }
  return set;
}

// Writes all of data[0, len) to `fd`; false with errno set when it could not.
bool write_all(int fd, const char* data, size_t len) {
  for (size_t off = 0; off < len;) {
    ssize_t w = write(fd, data + off, len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    off += static_cast<size_t>(w);
  }
  return true;
}

// What the parent read from the ranks.
struct Captured {
  trace::Trace trace;
  bool timed_out = false;
  bool log_failed = false;
  std::string log_error;
};

// Reads the shared stream (parsed as it comes, copied to `log_fd`) and every
// rank's stderr until all are closed or the deadline passes; closes
// `shared_fd`, `log_fd` and the stderr pipes that reached their end.
Captured capture_ranks(const BenchOptions& o, int shared_fd, int log_fd, std::vector<Rank>& ranks) {
  Captured c;
  trace::TraceParser parser;
  parser.begin_source("<ranks' shared stderr>");
  char buf[65536];
  Deadline deadline = Deadline::after_ms(o.timeout_ms);
  size_t open_fds = ranks.size() + 1;
  while (open_fds > 0) {
    if (deadline.expired()) {
      c.timed_out = true;
      break;
    }
    std::vector<pollfd> fds;
    std::vector<int> who;  // -1: the shared stream, else the rank index
    if (shared_fd >= 0) fds.push_back({shared_fd, POLLIN, 0}), who.push_back(-1);
    for (size_t i = 0; i < ranks.size(); ++i) {
      if (ranks[i].err_fd >= 0) fds.push_back({ranks[i].err_fd, POLLIN, 0}), who.push_back(static_cast<int>(i));
    }
    int left = static_cast<int>(std::min<uint64_t>(deadline.remaining_ns() / 1000000 + 1, 1000));
    int n = poll(fds.data(), fds.size(), left);
    if (n < 0 && errno != EINTR) break;
    for (size_t k = 0; n > 0 && k < fds.size(); ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = read(fds[k].fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        close(fds[k].fd);
        if (who[k] < 0)
          shared_fd = -1;
        else
          ranks[static_cast<size_t>(who[k])].err_fd = -1;
        --open_fds;
        continue;
      }
      const size_t len = static_cast<size_t>(got);
      if (who[k] >= 0) {
        keep_tail(ranks[static_cast<size_t>(who[k])].tail, buf, len);
        continue;
      }
      parser.feed_chunk(std::string_view(buf, len));
      if (log_fd >= 0 && !c.log_failed && !write_all(log_fd, buf, len)) {
        c.log_failed = true;
        c.log_error = std::strerror(errno);
      }
    }
  }
  if (shared_fd >= 0) close(shared_fd);
  parser.end_source();
  if (log_fd >= 0 && close(log_fd) != 0 && !c.log_failed) {
    c.log_failed = true;
    c.log_error = std::strerror(errno);
  }
  c.trace = parser.finish();
  return c;
}

// Waits for every rank (killing them first after a timeout) and keeps the
// rest of their stderr; returns the ranks that did not exit 0.
std::vector<const Rank*> reap_ranks(std::vector<Rank>& ranks, bool timed_out) {
  std::vector<const Rank*> failed;
  char buf[65536];
  for (Rank& k : ranks) {
    if (timed_out) kill(k.pid, SIGKILL);
    while (waitpid(k.pid, &k.status, 0) < 0 && errno == EINTR) {
    }
    if (k.err_fd >= 0) {
      // After the rank ended: whatever it wrote last is still in its pipe.
      ssize_t got;
      while ((got = read(k.err_fd, buf, sizeof buf)) > 0) keep_tail(k.tail, buf, static_cast<size_t>(got));
      close(k.err_fd);
      k.err_fd = -1;
    }
    if (!WIFEXITED(k.status) || WEXITSTATUS(k.status) != 0) failed.push_back(&k);
  }
  return failed;
}

// Says what went wrong with the harness itself (timeout, forks, ranks, --log);
// returns true when anything did.
bool report_harness(const BenchOptions& o, const RankSet& set, const std::vector<const Rank*>& failed,
                    const Captured& c) {
  if (c.timed_out) {
    std::fprintf(stderr, "taskring bench: ranks did not finish within %llu ms; killed\n",
                 static_cast<unsigned long long>(o.timeout_ms));
  }
  if (set.fork_failed) {
    std::fprintf(stderr, "taskring bench: only %zu of %d ranks started\n", set.ranks.size(), o.ranks);
  }
  if (!failed.empty()) {
    std::fprintf(stderr, "taskring bench: %zu of %zu rank(s) failed\n", failed.size(), set.ranks.size());
    for (const Rank* k : failed) {
      std::fprintf(stderr, "  rank %d (pid %d) %s; its last stderr lines:\n%s", k->index, static_cast<int>(k->pid),
                   describe_exit(k->status).c_str(), last_lines(k->tail).c_str());
    }
  }
  if (c.log_failed) {
    std::fprintf(stderr, "taskring bench: writing --log '%s' failed: %s\n", o.log_path.c_str(), c.log_error.c_str());
  }
  return !failed.empty() || c.timed_out || set.fork_failed || c.log_failed;
}

// Forks the ranks, captures and validates their spans; returns the exit status.
int run_bench(const BenchOptions& o) {
  if (const int usage = check_bench_options(o); usage != 0) return usage;
  int log_fd = -1;
  if (!o.log_path.empty()) {
    log_fd = open(o.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0) {
      std::fprintf(stderr, "taskring bench: cannot write --log '%s': %s\n", o.log_path.c_str(), std::strerror(errno));
      return 2;
    }
  }
  int shared[2];
  if (pipe2(shared, O_CLOEXEC) != 0) {
    std::perror("taskring bench: pipe");
    if (log_fd >= 0) close(log_fd);
    return 1;
  }
  std::vector<CpuSpeed> host_before = probe_bench_host();
  std::fflush(nullptr);
  RankSet set = fork_ranks(o, shared[0], shared[1], log_fd);
  close(shared[1]);
  Captured c = capture_ranks(o, shared[0], log_fd, set.ranks);
  const std::vector<const Rank*> failed = reap_ranks(set.ranks, c.timed_out);

  trace::StageNames names;
  auto invs = trace::group_invocations(c.trace, names);
  trace::MatrixOptions mo;
  mo.ranks = o.ranks;
  mo.rounds = o.rounds;
  mo.warmup = o.warmup;
  mo.dispatches_per_round = 1;
  auto m = trace::build_matrix(c.trace, invs, names, mo);
  if (!m.ok()) {
    std::fprintf(stderr, "taskring bench: %s\n", m.status().to_string().c_str());
    return 3;
  }
  trace::set_host_speed(*m, std::move(host_before), probe_bench_host());
  std::cout << (o.json ? trace::render_json(c.trace, *m) : trace::render_matrix(c.trace, *m)) << std::flush;
  const int rc = trace::verdict_exit_code(c.trace, *m);
  const bool harness_failed = report_harness(o, set, failed, c);
  return rc != 0 ? rc : harness_failed ? 1 : 0;
}

}  // namespace

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) + (abbrev ? " (SIG" + std::string(abbrev) + ")" : "");
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended with wait status " + std::to_string(status);
}

std::vector<CpuSpeed> probe_bench_host() {
  auto p = probe_cpu_speed(16, Deadline::after_ms(50));
  return p.ok() ? std::move(*p) : std::vector<CpuSpeed>{};
}

Command add_bench_command(CLI::App& app) {
  auto opts = std::make_shared<BenchOptions>();
  auto* cmd = app.add_subcommand("bench", "fork ranks running a workload, capture their spans, validate the matrix");
  cmd->add_option("workload", opts->workload, "workload name (taskring run --list)")->required();
  cmd->add_option("--ranks", opts->ranks, "forked ranks (default 8)");
  cmd->add_option("--rounds", opts->rounds, "measured rounds per rank (default 8)");
  cmd->add_option("--warmup", opts->warmup, "warm-up rounds per rank (default 2)");
  cmd->add_option("--log", opts->log_path, "also write the captured stream to this file");
  cmd->add_option("--timeout-ms", opts->timeout_ms, "kill the ranks after this long (default 600000)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{86400000}));
  cmd->add_flag("--json", opts->json, "print the validated matrix as JSON");
  cmd->add_flag("--profile", opts->profile, "record every rank's per-task device profile (core lanes in --chrome)");
  // Node-only options: named for a chip workload, they are refused, not ignored.
  std::vector<CLI::Option*> node_only = {
      cmd->add_option("--chips", opts->chips, "chip children of a node workload (default 8)"),
      cmd->add_option("--runtime", opts->runtime, "node workloads: the chips' L2 runtime (tmr or hbg)")
          ->check(CLI::IsMember({"tmr", "hbg"})),
      cmd->add_option("--nodes", opts->nodes, "L4: nodes (MPI ranks) of a node workload; run under mpirun -np N")
          ->check(CLI::Range(1, 256))};
  cmd->add_flag("--balanced-routing", opts->balanced, "node workload moe: round-robin routing (equal load per rank)");
  cmd->add_option("--param", opts->params, "a node workload parameter, name=value (repeatable)");
  return {
      cmd, [cmd, opts, node_only] {
        if (is_node_workload(opts->workload)) {
          if (cmd->count("--ranks") > 0) {
            std::fprintf(stderr,
                         "taskring bench: --ranks forks ranks of a chip workload; %s is a node workload: "
                         "--chips sets its chips (and --nodes its MPI ranks)\n",
                         opts->workload.c_str());
            return 2;
          }
          NodeBenchOptions no{opts->workload, opts->chips,      opts->rounds, opts->warmup, opts->json,
                              opts->log_path, opts->timeout_ms, {},           opts->runtime};
          if (opts->balanced) no.params.emplace_back("balanced-routing", 1);
          for (const std::string& kv : opts->params) {
            const size_t eq = kv.find('=');
            char* end = nullptr;
            errno = 0;
            const long long v = eq == std::string::npos ? 0 : std::strtoll(kv.c_str() + eq + 1, &end, 10);
            if (eq == std::string::npos || eq == 0 || end == nullptr || *end != '\0' || end == kv.c_str() + eq + 1) {
              std::fprintf(stderr, "taskring bench: --param '%s' is not name=integer\n", kv.c_str());
              return 2;
            }
            if (errno == ERANGE) {  // strtoll clamped it: quote what the user wrote, not the clamp
              std::fprintf(stderr, "taskring bench: --param '%s': %s is outside the 64-bit integer range\n", kv.c_str(),
                           kv.c_str() + eq + 1);
              return 2;
            }
            no.params.emplace_back(kv.substr(0, eq), v);
          }
          no.nodes = opts->nodes;
          return no.nodes > 0 ? run_net_bench(no) : run_node_bench(no);
        }
        if (opts->balanced || !opts->params.empty()) {
          std::fprintf(stderr, "taskring bench: --balanced-routing and --param apply to node workloads only\n");
          return 2;
        }
        for (const CLI::Option* opt : node_only) {
          if (opt->count() > 0) {
            std::fprintf(stderr,
                         "taskring bench: %s applies to node workloads only ('%s' runs on one chip per rank; "
                         "use --ranks)\n",
                         opt->get_name().c_str(), opts->workload.c_str());
            return 2;
          }
        }
        return run_bench(*opts);
      }};
}

}  // namespace taskring::cli
