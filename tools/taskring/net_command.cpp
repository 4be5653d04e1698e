// The L4 forms of `taskring run` and `taskring bench` (node workloads over
// MPI ranks). Started by mpirun, one process per node:
//
//   mpirun -np K taskring run multi_chip --nodes K --chips C [--rounds R --warmup W]
//   mpirun -np K taskring bench multi_chip --nodes K --chips C --rounds R --warmup W [--json]
//
// Every rank builds the workload's node (C chips, their SUB workers) and its
// inputs; rank 0 drives the L4 worker: each round is one L4 run of one task
// per rank ("round": the workload's orchestration on that node, then its
// golden check there), so a round passes only when every node passed.
//
// bench: every rank sends its stderr (its own and its chip children's
// spans; chip ranks are node*C + chip) into an anonymous in-memory file
// before anything starts; after the rounds, an L4 "collect" task per rank
// writes that text into a buffer owned by rank 0 (moved by the L4 data path,
// MPI point-to-point), and rank 0 validates the (chip rank, round) matrix of
// K*C ranks x R rounds with the trace analyser. Before the first round and
// after the last, an L4 "probe" task per rank times that node's CPUs (the
// bench's host-speed control), gathered the same way.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.hpp"
#include "taskring/base/clock.hpp"
#include "taskring/log/strace.hpp"
#include "taskring/net/net_worker.hpp"
#include "taskring/workloads/node_workload.hpp"

namespace taskring::cli {
namespace {

using net::NetConfig;
using net::NetWorker;
using workloads::NodeWorkload;

// Bytes of span text one rank may send back (bench).
constexpr uint64_t kTraceCap = 8ull << 20;

// Bytes of one node's host-speed probe: a count, then (cpu, chunk_us)
// pairs of 8 bytes each, for up to 16 CPUs (probe_bench_host).
constexpr uint64_t kProbeBytes = 8 + 16 * 16;

struct NetRun {
  int rc = 0;         // 0 ok, 1 failure, 2 usage
  std::string trace;  // bench: every rank's captured text, rank 0 only
  // bench, rank 0: every node's CPUs timed before the first round and after
  // the last one (empty when a probe could not be gathered).
  std::vector<CpuSpeed> host_before, host_after;
};

// The "probe" L4 task: this node's probe_bench_host() into `out`.
Status write_probe(const ChipTensor& out) {
  const std::vector<CpuSpeed> p = probe_bench_host();
  char* b = out.data<char>();
  const uint64_t n = std::min<uint64_t>(p.size(), (out.extent_bytes() - 8) / 16);
  std::memcpy(b, &n, 8);
  for (uint64_t i = 0; i < n; ++i) {
    const int64_t cpu = p[i].cpu;
    std::memcpy(b + 8 + 16 * i, &cpu, 8);
    std::memcpy(b + 16 + 16 * i, &p[i].chunk_us, 8);
  }
  return Status::Ok();
}

// Rank 0: runs the "probe" task on every node at once and gathers the
// timings, each tagged with its node.
Expected<std::vector<CpuSpeed>> probe_every_node(NetWorker& net, int probe_task, int nodes) {
  std::vector<net::RemoteBuffer> bufs;
  for (int r = 0; r < nodes; ++r) {
    TASKRING_ASSIGN_OR_RETURN(net::RemoteBuffer b, net.remote_malloc(0, kProbeBytes));
    bufs.push_back(b);
  }
  Status s = net.run([&](node::Orchestrator& o) -> Status {
    for (int r = 0; r < nodes; ++r) {
      TASKRING_ASSIGN_OR_RETURN(ChipTensor t, net.remote_tensor(bufs[static_cast<size_t>(r)].whole(),
                                                                {static_cast<uint32_t>(kProbeBytes)}, DataType::UINT8));
      ChipTaskArgs a;
      a.add_output(t);
      TASKRING_RETURN_IF_ERROR(o.submit_next_level(probe_task, a, r));
    }
    return Status::Ok();
  });
  std::vector<CpuSpeed> all;
  char b[kProbeBytes];
  for (int r = 0; r < nodes && s.ok(); ++r) {
    s = net.remote_copy_from(b, bufs[static_cast<size_t>(r)].whole());
    uint64_t n = 0;
    std::memcpy(&n, b, 8);
    for (uint64_t i = 0; s.ok() && i < std::min<uint64_t>(n, 16); ++i) {
      int64_t cpu = 0;
      CpuSpeed c;
      std::memcpy(&cpu, b + 8 + 16 * i, 8);
      std::memcpy(&c.chunk_us, b + 16 + 16 * i, 8);
      c.cpu = static_cast<int>(cpu);
      c.node = r;
      all.push_back(c);
    }
  }
  for (const net::RemoteBuffer& buf : bufs) (void)net.remote_free(buf);
  if (!s.ok()) return s;
  return all;
}

std::string read_fd_all(int fd) {
  std::string s;
  char buf[65536];
  off_t off = 0;
  while (true) {
    ssize_t n = pread(fd, buf, sizeof(buf), off);
    if (n <= 0) break;
    s.append(buf, static_cast<size_t>(n));
    off += n;
  }
  return s;
}

// The L4 configuration of workload `w` on `nodes` nodes, with what every rank
// must agree on (the startup handshake refuses a rank that would run
// something else, naming it and the field).
NetConfig net_config(NodeWorkload& w, const std::string& runtime, int nodes, int warmup, int rounds, int capture_fd) {
  NetConfig cfg;
  cfg.node = w.node_config();
  cfg.node.runtime = runtime;
  if (capture_fd >= 0) cfg.pool_bytes = static_cast<uint64_t>(nodes) * kTraceCap + (1ull << 20);
  // The workload's inputs are set up on every rank before it says HELLO,
  // so no round reaches a rank whose inputs are not there yet.
  cfg.node_setup = [&w](node::NodeWorker& n) { return w.setup(n); };
  cfg.expected_ranks = static_cast<uint32_t>(nodes);
  cfg.job.emplace_back("command", capture_fd >= 0 ? "bench" : "run");
  cfg.job.emplace_back("workload", std::string(w.name()));
  for (const workloads::Param& p : w.params().entries()) cfg.job.emplace_back("--" + p.name, std::to_string(p.value));
  cfg.job.emplace_back("rounds", std::to_string(rounds));
  cfg.job.emplace_back("warmup", std::to_string(warmup));
  return cfg;
}

// The L4 callables, registered in the same order on every rank.
struct NetTasks {
  int round = 0;    // one round of the workload on a node, golden checked
  int collect = 0;  // bench: a node's captured span text into its output tensor
  int probe = 0;    // bench: a node's CPU speed (write_probe)
};

Expected<NetTasks> register_net_tasks(NetWorker& net, NodeWorkload& w, int capture_fd) {
  TASKRING_RETURN_IF_ERROR(w.register_callables(net.node()));
  auto round = net.register_task("round", [&w](node::NodeWorker& n, const ChipTaskArgs&) -> Status {
    w.reset_output();
    TASKRING_RETURN_IF_ERROR(n.run(w.orchestration(), Deadline::after_ms(600000)));
    return w.check();
  });
  if (!round.ok()) return round.status();
  auto collect = net.register_task("collect", [capture_fd](node::NodeWorker&, const ChipTaskArgs& a) -> Status {
    if (capture_fd < 0) return failed_precondition("nothing captured (not a bench)");
    log::strace::flush_strace();
    std::string text = read_fd_all(capture_fd);
    const ChipTensor& t = *a.tensor(0);
    const uint64_t room = t.extent_bytes() - 8;
    const uint64_t n = std::min<uint64_t>(text.size(), room);
    std::memcpy(t.data<char>(), &n, 8);
    std::memcpy(t.data<char>() + 8, text.data(), n);
    if (text.size() > room)
      return resource_exhausted("this rank's span text (" + std::to_string(text.size()) + " B) exceeds " +
                                std::to_string(room) + " B");
    return Status::Ok();
  });
  if (!collect.ok()) return collect.status();
  auto probe =
      net.register_task("probe", [](node::NodeWorker&, const ChipTaskArgs& a) { return write_probe(*a.tensor(0)); });
  if (!probe.ok()) return probe.status();
  return NetTasks{*round, *collect, *probe};
}

// Runs warmup + rounds on every node from rank 0, printing a row per round
// when `print`; stops at the first failed round (after a lost rank every
// later round would fail at once, and after a domain that cannot be allocated
// each would wait out its deadline again, issue 38). Returns the measured
// rounds that passed and sets `last` to the last round's status.
int run_net_rounds_on_rank0(NetWorker& net, int round_task, int nodes, int warmup, int rounds, bool print,
                            const std::string& who, Status& last) {
  int passed = 0;
  for (int i = 0; i < warmup + rounds; ++i) {
    const uint64_t t0 = mono_ns();
    last = net.run([&](node::Orchestrator& o) -> Status {
      ChipTaskArgs none;
      for (int r = 0; r < nodes; ++r) TASKRING_RETURN_IF_ERROR(o.submit_next_level(round_task, none, r));
      return Status::Ok();
    });
    const double ms = static_cast<double>(mono_ns() - t0) / 1e6;
    if (print)
      std::printf("%-8s %3d  host_ms %9.3f  %s on %d nodes\n", i < warmup ? "warmup" : "round",
                  i < warmup ? i : i - warmup + 1, ms, last.ok() ? "golden PASS" : "FAILED", nodes);
    if (!last.ok()) {
      std::fprintf(stderr, "%s: round %d failed; stopping: %s\n", who.c_str(), i, last.to_string().c_str());
      break;
    }
    if (i >= warmup) ++passed;
  }
  return passed;
}

// Bench: gathers every node's captured span text into `trace` (rank order).
Status collect_node_spans(NetWorker& net, int collect_task, int nodes, std::string& trace) {
  std::vector<net::RemoteBuffer> bufs;
  Status cs;
  for (int r = 0; r < nodes && cs.ok(); ++r) {
    auto b = net.remote_malloc(0, kTraceCap);
    if (!b.ok())
      cs = b.status();
    else
      bufs.push_back(*b);
  }
  if (cs.ok())
    cs = net.run([&](node::Orchestrator& o) -> Status {
      for (int r = 0; r < nodes; ++r) {
        auto t = net.remote_tensor(bufs[static_cast<size_t>(r)].whole(), {static_cast<uint32_t>(kTraceCap)},
                                   DataType::UINT8);
        if (!t.ok()) return t.status();
        ChipTaskArgs a;
        a.add_output(*t);
        TASKRING_RETURN_IF_ERROR(o.submit_next_level(collect_task, a, r));
      }
      return Status::Ok();
    });
  std::vector<char> buf(kTraceCap);
  for (size_t r = 0; r < bufs.size() && cs.ok(); ++r) {
    cs = net.remote_copy_from(buf.data(), bufs[r].whole());
    uint64_t n = 0;
    std::memcpy(&n, buf.data(), 8);
    if (cs.ok()) trace.append(buf.data() + 8, std::min<uint64_t>(n, kTraceCap - 8));
  }
  return cs;
}

NetRun run_rounds(NodeWorkload& w, const std::string& runtime, int nodes, int warmup, int rounds, bool print,
                  int capture_fd) {
  NetRun out;
  const std::string who = "taskring " + std::string(capture_fd >= 0 ? "bench " : "run ") + std::string(w.name());
  // Where this node sits among the others (moe spans them), before its
  // config; place() validates.
  Status v = w.place(NetWorker::launcher_rank(), nodes);
  if (!v.ok()) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), v.to_string().c_str());
    out.rc = 2;
    return out;
  }
  const NetConfig cfg = net_config(w, runtime, nodes, warmup, rounds, capture_fd);
  NetWorker net(cfg);
  Expected<NetTasks> tasks = register_net_tasks(net, w, capture_fd);
  if (!tasks.ok()) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), tasks.status().to_string().c_str());
    out.rc = 1;
    return out;
  }
  Status s = net.init();
  if (s.ok() && net.ranks() != nodes)
    s = invalid_argument("--nodes " + std::to_string(nodes) + " but mpirun started " + std::to_string(net.ranks()) +
                         " ranks (mpirun -np " + std::to_string(nodes) + ")");
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), s.to_string().c_str());
    (void)net.close();
    out.rc = 1;
    return out;
  }
  if (net.rank() != 0) {
    Status srv = net.serve();
    Status c = net.close();
    out.rc = srv.ok() && c.ok() ? 0 : 1;
    return out;
  }
  if (print)
    std::printf("%s: %d nodes x %d chips, %d SUB workers per node, %llu node tasks per node per round (%s)\n",
                who.c_str(), nodes, cfg.node.chips, cfg.node.sub_workers,
                static_cast<unsigned long long>(w.expected_tasks()), w.params().describe().c_str());
  // The host-speed control (docs/trace.md): a probe that fails to travel
  // leaves the report without one and says why, but fails nothing.
  auto probe_nodes = [&](std::vector<CpuSpeed>* into) {
    auto p = probe_every_node(net, tasks->probe, nodes);
    if (p.ok())
      *into = std::move(*p);
    else
      std::fprintf(stderr, "%s: probing the nodes' CPU speed: %s\n", who.c_str(), p.status().to_string().c_str());
  };
  if (capture_fd >= 0) probe_nodes(&out.host_before);
  int passed = run_net_rounds_on_rank0(net, tasks->round, nodes, warmup, rounds, print, who, s);
  if (capture_fd >= 0 && s.ok() && !out.host_before.empty()) probe_nodes(&out.host_after);
  if (capture_fd >= 0 && s.ok()) {
    if (Status cs = collect_node_spans(net, tasks->collect, nodes, out.trace); !cs.ok()) {
      std::fprintf(stderr, "%s: collecting the spans: %s\n", who.c_str(), cs.to_string().c_str());
      passed = -1;
    }
  }
  Status c = net.close();
  if (!c.ok()) std::fprintf(stderr, "%s: %s\n", who.c_str(), c.to_string().c_str());
  if (print) std::printf("\n%d of %d measured rounds passed on every node\n", passed, rounds);
  out.rc = passed == rounds && c.ok() ? 0 : 1;
  return out;
}

}  // namespace

int run_net_rounds(NodeWorkload& w, const std::string& runtime, int nodes, int warmup, int rounds) {
  return run_rounds(w, runtime, nodes, warmup, rounds, true, -1).rc;
}

int run_net_bench(const NodeBenchOptions& o) {
  if (o.nodes < 1) {
    std::fprintf(stderr, "taskring bench: --nodes must be >= 1\n");
    return 2;
  }
  std::unique_ptr<NodeWorkload> made = prepare_node_bench(o);
  if (!made) return 2;
  NodeWorkload& w = *made;
  // Before any fork or thread: this rank's stderr (and its children's)
  // goes to an in-memory file, appended by every process.
  std::fflush(nullptr);
  const int mem = memfd_create("taskring-bench-spans", MFD_CLOEXEC);
  const int saved = dup(2);
  if (mem < 0 || saved < 0 || fcntl(mem, F_SETFL, O_APPEND) != 0 || dup2(mem, 2) < 0) {
    std::perror("taskring bench: capturing stderr");
    return 1;
  }
  NetRun r = run_rounds(w, o.runtime, o.nodes, o.warmup, o.rounds, false, mem);
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  const std::string own = read_fd_all(mem);
  close(mem);
  if (!o.log_path.empty() && !r.trace.empty()) {
    FILE* f = std::fopen(o.log_path.c_str(), "wb");
    if (f) {
      std::fwrite(r.trace.data(), 1, r.trace.size(), f);
      std::fclose(f);
    }
  }
  if (r.trace.empty()) {  // not rank 0, or nothing collected: show what went wrong here
    if (r.rc != 0) std::fwrite(own.data(), 1, own.size(), stderr);
    return r.rc;
  }
  const int rc = validate_chip_matrix(r.trace, "<spans of every node>", o.nodes * o.chips,
                                      static_cast<int>(w.chip_runs_per_round()), o, std::move(r.host_before),
                                      std::move(r.host_after));
  if (rc == 3) return 3;
  if (r.rc != 0) std::fprintf(stderr, "taskring bench: the L4 run failed:\n%s", own.c_str());
  return rc != 0 ? rc : r.rc;
}

}  // namespace taskring::cli
