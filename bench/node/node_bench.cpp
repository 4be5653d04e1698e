// bench_node: the costs of the L3 node (issue 10), measured in one run.
//
//   (a) mailbox round trip parent <-> chip child through the control frame
//       (NodeWorker::ping_chip), with the child spinning (back-to-back
//       pings) and parked (a pause longer than its spin phase between
//       pings), next to the floor: a bare fork + shared-memory ping-pong on
//       the same spin-then-park futex bell, measured in the same run;
//   (b) run overhead: runs of 1..256 no-op SUB tasks, no-op chip tasks (an
//       orchestration that submits nothing) and chip tasks of one no-op
//       kernel (the chip's executor runs it) -> least-squares fit of µs per run = fixed + per_task * tasks, and
//       the same fit of the parks per run (voluntary context switches of
//       the parent's and the child's threads: each is a thread that blocked,
//       so its wake is on the task's path; counts, not times, so they hold
//       under load), and the minor page faults per timed run at each task
//       count (a first touch, e.g. of a mailbox slot, in a small point moves
//       the fitted fixed term);
//   (c) fork + INIT_READY: NodeWorker::init() for 1, 2, 4, 8 chips.
// Prints a table and, with --json <file>, writes the numbers as JSON.
// Numbers depend on the machine and its load: quote `uptime` beside them.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "latency_stats.hpp"
#include "shared_region.hpp"
#include "shm_bell.hpp"
#include "pto_orchestration_api.h"
#include "taskring/base/clock.hpp"
#include "taskring/log/init.hpp"
#include "taskring/node/node_worker.hpp"

using namespace taskring;
using namespace taskring::node;

namespace {

using Stats = taskring::bench::LatencyStats;
using taskring::bench::summarise;

// A pause that outlasts the peer's spin phase, so it parks.
void pause_us(uint64_t us) {
  const uint64_t end = mono_ns() + us * 1000;
  while (mono_ns() < end) {
  }
}

// ---- (a) floor: bare fork + shm futex ping-pong ----
struct PingPong {
  ShmBell to_child, to_parent;
  std::atomic<uint32_t> req{0}, ack{0};
};

std::pair<Stats, Stats> floor_round_trip(int iters) {
  auto region = SharedRegion::map(4096, "floor");
  auto* pp = new (region->data()) PingPong();
  pid_t pid = fork();
  if (pid == 0) {
    uint32_t seen = 0;
    while (true) {
      (void)bell_wait(
          pp->to_child, [&] { return pp->req.load(std::memory_order_acquire) != seen; }, [] { return Status::Ok(); },
          Deadline::after_ms(10000), "req", 100'000'000);
      seen = pp->req.load(std::memory_order_acquire);
      if (seen == UINT32_MAX) _exit(0);
      pp->ack.store(seen, std::memory_order_release);
      bell_ring(pp->to_parent);
    }
  }
  auto one = [&](uint32_t i) {
    const uint64_t t0 = mono_ns();
    pp->req.store(i, std::memory_order_release);
    bell_ring(pp->to_child);
    (void)bell_wait(
        pp->to_parent, [&] { return pp->ack.load(std::memory_order_acquire) == i; }, [] { return Status::Ok(); },
        Deadline::after_ms(10000), "ack", 2'000'000);
    return static_cast<double>(mono_ns() - t0) / 1000.0;
  };
  std::vector<double> spin, parked;
  uint32_t n = 1;
  for (int i = 0; i < iters; ++i) spin.push_back(one(n++));
  for (int i = 0; i < iters / 4; ++i) {
    pause_us(2000);
    parked.push_back(one(n++));
  }
  pp->req.store(UINT32_MAX, std::memory_order_release);
  bell_ring(pp->to_child);
  waitpid(pid, nullptr, 0);
  return {summarise(spin), summarise(parked)};
}

// ---- (a) the node's control frame ----
std::pair<Stats, Stats> node_round_trip(int iters) {
  NodeConfig c;
  c.chips = 1;
  c.chip_threads = 1;
  c.heap_ring_bytes = 1 << 16;
  c.shared_bytes = 1 << 16;
  NodeWorker w(c);
  if (!w.init().ok()) return {};
  std::vector<double> spin, parked;
  for (int i = 0; i < iters; ++i) {
    const uint64_t t0 = mono_ns();
    (void)w.ping_chip(0);
    spin.push_back(static_cast<double>(mono_ns() - t0) / 1000.0);
  }
  for (int i = 0; i < iters / 4; ++i) {
    pause_us(2000);
    const uint64_t t0 = mono_ns();
    (void)w.ping_chip(0);
    parked.push_back(static_cast<double>(mono_ns() - t0) / 1000.0);
  }
  (void)w.close();
  return {summarise(spin), summarise(parked)};
}

// ---- (b) run overhead ----
struct Fit {
  double fixed_us = 0, per_task_us = 0;
  std::vector<std::pair<int, double>> points;  // tasks, median µs per run
};

// Voluntary context switches of every thread of process `pid` (0: this
// one). A thread switches voluntarily when it blocks (a futex park, a
// sleep); a sched_yield that hands the CPU over counts as involuntary. A
// thread that exits between the listing and the read is skipped.
uint64_t parks_of(pid_t pid) {
  namespace fs = std::filesystem;
  const fs::path dir = pid == 0 ? fs::path("/proc/self/task") : fs::path("/proc") / std::to_string(pid) / "task";
  std::error_code ec;
  uint64_t n = 0;
  for (const auto& t : fs::directory_iterator(dir, ec)) {
    std::ifstream f(t.path() / "status");
    std::string line;
    while (std::getline(f, line)) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) n += std::stoull(line.substr(line.find(':') + 1));
    }
  }
  return n;
}

// Minor page faults of process `pid` (0: this one), all its threads: a
// page touched for the first time (a mailbox slot, a deeper stack, new
// code). A one-off fault costs a timed run a few µs: in the small points it
// moves the fixed term of the fit, so the bench shows where they land.
uint64_t minor_faults_of(pid_t pid) {
  std::ifstream f(pid == 0 ? std::string("/proc/self/stat") : "/proc/" + std::to_string(pid) + "/stat");
  std::string s;
  std::getline(f, s);
  const size_t paren = s.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream fields(s.substr(paren + 2));
  std::string v;
  for (int i = 3; i <= 10 && fields >> v; ++i) {  // field 10 of stat(5): minflt
  }
  return v.empty() ? 0 : std::stoull(v);
}

// Parks per run = fixed + per_task * tasks, for the parent and the child;
// minor faults per timed run at each task count.
struct ParkFit {
  Fit parent, child;
  std::vector<std::pair<int, double>> parent_faults, child_faults;
};

Fit fit(std::vector<std::pair<int, double>> pts) {
  double n = static_cast<double>(pts.size()), sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (auto [x, y] : pts) {
    sx += x;
    sy += y;
    sxx += static_cast<double>(x) * x;
    sxy += x * y;
  }
  Fit f;
  f.per_task_us = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  f.fixed_us = (sy - f.per_task_us * sx) / n;
  f.points = std::move(pts);
  return f;
}

void noop_entry(const ChipTaskArgs&) {}
extern "C" void noop_kernel(int64_t*) {}
void one_kernel_entry(const ChipTaskArgs&) {
  CoreTaskArgs t;
  const uint64_t unused = 0;
  t.add_scalars(&unused, 1);
  rt_submit_aiv_task(0, t);
}

enum class Load { kSub, kChip, kChipKernel };

Fit run_overhead(Load load, int reps, ParkFit* parks) {
  const bool chip = load != Load::kSub;
  NodeConfig c;
  c.chips = chip ? 1 : 0;
  c.sub_workers = chip ? 0 : 1;
  c.chip_threads = 1;
  c.heap_ring_bytes = 1 << 16;
  c.shared_bytes = 1 << 16;
  NodeWorker w(c);
  ChipCallable cc;
  cc.name = "noop";
  cc.entry = load == Load::kChipKernel ? one_kernel_entry : noop_entry;
  cc.kernels.push_back(KernelBinding{0, noop_kernel, "", "noop"});
  int chip_id = *w.register_chip(cc);
  int sub_id = *w.register_sub("noop", [](const ChipTaskArgs&) { return Status::Ok(); });
  if (!w.init().ok()) return {};
  const pid_t child = chip ? w.chip_pid(0) : w.sub_pid(0);
  std::vector<std::pair<int, double>> pts, parent_parks, child_parks;
  for (int tasks : {1, 2, 4, 8, 16, 64, 256}) {
    std::vector<double> v;
    uint64_t parent0 = 0, child0 = 0, parent_pf0 = 0, child_pf0 = 0;
    for (int r = 0; r < reps + 2; ++r) {
      if (r == 2) {
        parent0 = parks_of(0), child0 = parks_of(child);
        parent_pf0 = minor_faults_of(0), child_pf0 = minor_faults_of(child);
      }
      const uint64_t t0 = mono_ns();
      Status s = w.run([&](Orchestrator& o) -> Status {
        ChipTaskArgs a;  // no tensors: independent tasks
        for (int i = 0; i < tasks; ++i)
          TASKRING_RETURN_IF_ERROR(chip ? o.submit_next_level(chip_id, a, 0) : o.submit_sub(sub_id, a));
        return Status::Ok();
      });
      if (!s.ok()) std::fprintf(stderr, "run failed: %s\n", s.to_string().c_str());
      if (r >= 2) v.push_back(static_cast<double>(mono_ns() - t0) / 1000.0);
    }
    pts.emplace_back(tasks, summarise(v).median_us);
    parent_parks.emplace_back(tasks, static_cast<double>(parks_of(0) - parent0) / reps);
    child_parks.emplace_back(tasks, static_cast<double>(parks_of(child) - child0) / reps);
    parks->parent_faults.emplace_back(tasks, static_cast<double>(minor_faults_of(0) - parent_pf0) / reps);
    parks->child_faults.emplace_back(tasks, static_cast<double>(minor_faults_of(child) - child_pf0) / reps);
  }
  (void)w.close();
  parks->parent = fit(parent_parks);
  parks->child = fit(child_parks);
  return fit(pts);
}

// ---- (c) fork + INIT_READY ----
std::vector<std::pair<int, double>> init_cost() {
  std::vector<std::pair<int, double>> out;
  for (int chips : {1, 2, 4, 8}) {
    NodeConfig c;
    c.chips = chips;
    c.heap_ring_bytes = 1 << 16;
    c.shared_bytes = 1 << 16;
    NodeWorker w(c);
    const uint64_t t0 = mono_ns();
    Status s = w.init();
    const double ms = static_cast<double>(mono_ns() - t0) / 1e6;
    if (!s.ok()) std::fprintf(stderr, "init failed: %s\n", s.to_string().c_str());
    out.emplace_back(chips, ms);
    (void)w.close();
  }
  return out;
}

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string s;
  std::getline(f, s);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  int iters = 2000, reps = 20;
  std::string only;  // one section alone, for a profiler: rtt | sub | chip | kernel | init
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json" && i + 1 < argc)
      json_path = argv[++i];
    else if (a == "--quick")
      iters = 200, reps = 5;
    else if (a == "--only" && i + 1 < argc)
      only = argv[++i];
    else {
      std::fprintf(stderr, "usage: bench_node [--quick] [--json FILE] [--only rtt|sub|chip|kernel|init]\n");
      return 2;
    }
  }
  if (!only.empty() && only != "rtt" && only != "sub" && only != "chip" && only != "kernel" && only != "init") {
    std::fprintf(stderr, "bench_node: --only takes rtt, sub, chip, kernel or init, not '%s'\n", only.c_str());
    return 2;
  }
  // TASKRING_LOG_LEVEL=warn keeps the children's spans out of the table.
  Status logging = log::init_logging(process_env());
  if (!logging.ok()) {
    std::fprintf(stderr, "bench_node: %s\n", logging.to_string().c_str());
    return 2;
  }
  const std::string load_before = load_average();
  // Every NodeWorker is made before this process starts a thread: the bench
  // itself is single-threaded between workers.
  auto want = [&](const char* s) { return only.empty() || only == s; };
  auto [floor_spin, floor_park] = want("rtt") ? floor_round_trip(iters) : std::pair<Stats, Stats>{};
  auto [node_spin, node_park] = want("rtt") ? node_round_trip(iters) : std::pair<Stats, Stats>{};
  ParkFit sub_parks, chip_parks, kernel_parks;
  Fit sub = want("sub") ? run_overhead(Load::kSub, reps, &sub_parks) : Fit{};
  Fit chip = want("chip") ? run_overhead(Load::kChip, reps, &chip_parks) : Fit{};
  Fit kernel = want("kernel") ? run_overhead(Load::kChipKernel, reps, &kernel_parks) : Fit{};
  auto init = want("init") ? init_cost() : std::vector<std::pair<int, double>>{};
  const std::string load_after = load_average();

  std::printf("bench_node  (loadavg before: %s; after: %s)\n\n", load_before.c_str(), load_after.c_str());
  std::printf("(a) round trip, µs            median     p99\n");
  std::printf("    floor, spinning          %8.2f %8.2f\n", floor_spin.median_us, floor_spin.p99_us);
  std::printf("    floor, parked            %8.2f %8.2f\n", floor_park.median_us, floor_park.p99_us);
  std::printf("    node control, spinning   %8.2f %8.2f   (%.2fx floor)\n", node_spin.median_us, node_spin.p99_us,
              node_spin.median_us / floor_spin.median_us);
  std::printf("    node control, parked     %8.2f %8.2f   (%.2fx floor)\n\n", node_park.median_us, node_park.p99_us,
              node_park.median_us / floor_park.median_us);
  auto print_fit = [](const char* what, const Fit& f, const ParkFit& p) {
    std::printf("(b) %s: fixed %.2f µs/run + %.3f µs/task\n    tasks:", what, f.fixed_us, f.per_task_us);
    for (auto [t, us] : f.points) std::printf(" %d=%.1f", t, us);
    std::printf(" (median µs per run)\n");
    std::printf("    parks: parent %.2f/run + %.3f/task, child %.2f/run + %.3f/task\n", p.parent.fixed_us,
                p.parent.per_task_us, p.child.fixed_us, p.child.per_task_us);
    std::printf("    minor faults per timed run, parent/child:");
    for (size_t i = 0; i < p.parent_faults.size(); ++i)
      std::printf(" %d=%.1f/%.1f", p.parent_faults[i].first, p.parent_faults[i].second, p.child_faults[i].second);
    std::printf("\n");
  };
  print_fit("no-op SUB tasks ", sub, sub_parks);
  print_fit("no-op chip tasks", chip, chip_parks);
  print_fit("chip tasks of one no-op kernel", kernel, kernel_parks);
  std::printf("\n(c) fork + INIT_READY:");
  for (auto [n, ms] : init) std::printf(" %d chips %.2f ms (%.2f ms/chip);", n, ms, ms / n);
  std::printf("\n");

  if (!json_path.empty()) {
    std::ofstream j(json_path);
    auto pairs = [](const std::vector<std::pair<int, double>>& v) {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i)
        s += (i ? "," : "") + std::string("[") + std::to_string(v[i].first) + "," + std::to_string(v[i].second) + "]";
      return s + "]";
    };
    auto parks = [&](const ParkFit& p) {
      return ",\"parks\":{\"parent_per_run\":" + std::to_string(p.parent.fixed_us) +
             ",\"parent_per_task\":" + std::to_string(p.parent.per_task_us) +
             ",\"child_per_run\":" + std::to_string(p.child.fixed_us) +
             ",\"child_per_task\":" + std::to_string(p.child.per_task_us) +
             "},\"minor_faults_per_run\":{\"parent\":" + pairs(p.parent_faults) +
             ",\"child\":" + pairs(p.child_faults) + "}";
    };
    auto pts = [&](const Fit& f) { return pairs(f.points); };
    j << "{\"loadavg_before\":\"" << load_before << "\",\"loadavg_after\":\"" << load_after << "\","
      << "\"round_trip_us\":{\"floor_spin\":" << floor_spin.median_us << ",\"floor_parked\":" << floor_park.median_us
      << ",\"node_spin\":" << node_spin.median_us << ",\"node_parked\":" << node_park.median_us << "},"
      << "\"run_overhead\":{\"sub\":{\"fixed_us\":" << sub.fixed_us << ",\"per_task_us\":" << sub.per_task_us
      << ",\"points\":" << pts(sub) << parks(sub_parks) << "},\"chip\":{\"fixed_us\":" << chip.fixed_us
      << ",\"per_task_us\":" << chip.per_task_us << ",\"points\":" << pts(chip) << parks(chip_parks)
      << "},\"chip_kernel\":{\"fixed_us\":" << kernel.fixed_us << ",\"per_task_us\":" << kernel.per_task_us
      << ",\"points\":" << pts(kernel) << parks(kernel_parks) << "}},\"init_ms\":[";
    for (size_t i = 0; i < init.size(); ++i)
      j << (i ? "," : "") << "[" << init[i].first << "," << init[i].second << "]";
    j << "]}\n";
  }
  return 0;
}
