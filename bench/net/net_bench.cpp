// bench_net: the costs of L4 (issue 14), measured in one run of
//
//   mpirun --oversubscribe -np 2 bench_net [--quick] [--json FILE]
//          [--poll-window-us N] [--no-fast-paths] [--iters N] [--round-trip-only]
//
//   (a) remote task round trip: NetWorker::run of one no-op node task on
//       rank 1 (encode, MPI send, the rank's executor, COMPLETION, the
//       engine's retire), next to the floor: a raw MPI ping-pong of 8 B
//       between the same two processes (MPI_Send/MPI_Recv); for the
//       breakdown, the same task on rank 0 itself (no second process) and a
//       two-thread futex ping-pong (the cost of the wakes our hops pay);
//   (b) transfer bandwidth for 4 KiB .. 64 MiB: remote_copy_to (PUT:
//       request, ready, data, done) and remote_copy_from (FETCH: request,
//       data) between rank 0 and a buffer on rank 1, next to MPI's own for
//       the same sizes: one MPI_Send of n bytes answered by a 1-byte
//       acknowledgement;
//   (c) a 4 KiB PUT or FETCH right after a no-op task on the buffer's owner
//       (alternately), and that task right after the transfer: the pattern
//       of a program that runs a task on a rank, then reads or writes its
//       data (the owner's executor and progress thread hand its core over).
// --poll-window-us and --no-fast-paths set NetConfig::poll_window_us and
// NetConfig::fast_paths = false (no doorbells, no direct channels).
// --iters N sets the round trips measured (default 2000, --quick 200);
// --round-trip-only measures (a)'s remote task and floor alone, for counting
// syscalls and context switches per round trip (perf stat, strace -c).
// The taskring phase runs first; its worker is closed without finalising
// MPI (NetConfig::finalize_mpi = false), then the raw MPI phase runs in the
// same processes. Prints a table and, with --json FILE, the numbers as JSON.
// TASKRING_LOG_LEVEL and TASKRING_STRACE_DIR apply (docs/knobs.md); by
// default every run's spans go to stderr, inside the measured round trip.
// Numbers depend on the machine and its load: quote `uptime` beside them.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "latency_stats.hpp"
#include "load_average.hpp"
#include "taskring/base/clock.hpp"
#include "taskring/base/knobs.hpp"
#include "taskring/base/waiter.hpp"
#include "taskring/log/init.hpp"
#include "taskring/net/net_worker.hpp"

using namespace taskring;
using namespace taskring::net;

namespace {

using Stats = taskring::bench::LatencyStats;
using taskring::bench::summarise;

using taskring::bench::loadavg;

struct AfterTask {
  Stats task, put, fetch;  // the task after a transfer; PUT / FETCH after a task
};

// (c): 2 x n alternations of a no-op task on rank 1 and a 4 KiB PUT or
// FETCH of a buffer on rank 1.
Status after_task(NetWorker& w, int noop, int n, AfterTask* out) {
  TASKRING_ASSIGN_OR_RETURN(RemoteBuffer b, w.remote_malloc(1, 4096));
  std::vector<char> host(4096, 1);
  std::vector<double> task, put, fetch;
  ChipTaskArgs none;
  Status s;
  for (int i = 0; i < 2 * n && s.ok(); ++i) {
    const uint64_t t0 = mono_ns();
    s = w.run([&](Orchestrator& o) { return o.submit_next_level(noop, none, 1); });
    const uint64_t t1 = mono_ns();
    if (s.ok()) s = (i & 1) ? w.remote_copy_from(host.data(), b.whole()) : w.remote_copy_to(b.whole(), host.data());
    task.push_back((t1 - t0) / 1e3);
    ((i & 1) ? fetch : put).push_back((mono_ns() - t1) / 1e3);
  }
  out->task = summarise(task);
  out->put = summarise(put);
  out->fetch = summarise(fetch);
  Status f = w.remote_free(b);
  return s.ok() ? f : s;
}

struct Bw {
  uint64_t bytes;
  double put_gbs = 0, fetch_gbs = 0, mpi_gbs = 0;
};

double gbs(uint64_t bytes, double median_us) { return median_us > 0 ? bytes / (median_us * 1e3) : 0; }

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  uint64_t poll_window_us = NetConfig{}.poll_window_us;
  bool fast_paths = true;
  bool round_trip_only = false;
  int iters_arg = 0;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick")
      quick = true;
    else if (a == "--json" && i + 1 < argc)
      json_path = argv[++i];
    else if (a == "--poll-window-us" && i + 1 < argc)
      poll_window_us = std::stoull(argv[++i]);
    else if (a == "--no-fast-paths")
      fast_paths = false;
    else if (a == "--round-trip-only")
      round_trip_only = true;
    else if (a == "--iters" && i + 1 < argc && std::atoi(argv[i + 1]) > 0)
      iters_arg = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: mpirun -np 2 bench_net [--quick] [--json FILE] [--poll-window-us N] [--no-fast-paths] "
                   "[--iters N] [--round-trip-only]\n");
      return 2;
    }
  }
  const int iters = iters_arg > 0 ? iters_arg : quick ? 200 : 2000;
  std::vector<uint64_t> sizes = {4096, 65536, 1u << 20, 8u << 20, 64u << 20};
  if (quick) sizes = {4096, 1u << 20, 8u << 20};
  if (round_trip_only) sizes.clear();
  // The logging knobs as the CLI reads them: TASKRING_STRACE_DIR moves the
  // run spans (three records per run, in the measured round trip) to a
  // file, TASKRING_LOG_LEVEL=warn drops them (for a breakdown only).
  if (Status logging = log::init_logging(process_env()); !logging.ok()) {
    std::fprintf(stderr, "bench_net: %s\n", logging.to_string().c_str());
    return 2;
  }
  const std::string load_before = loadavg();

  NetConfig cfg;
  cfg.node.chips = 0;
  cfg.node.sub_workers = 1;
  cfg.node.heap_ring_bytes = 1 << 20;
  cfg.node.shared_bytes = 1 << 20;
  cfg.pool_bytes = (64ull << 20) + (1 << 20);
  cfg.staging_bytes = 1 << 20;
  cfg.finalize_mpi = false;
  cfg.poll_window_us = poll_window_us;
  cfg.fast_paths = fast_paths;
  NetWorker w(cfg);
  const int noop = *w.register_task("noop", [](NodeWorker&, const ChipTaskArgs&) { return Status::Ok(); });
  Status s = w.init();
  if (!s.ok()) {
    std::fprintf(stderr, "bench_net: %s\n", s.to_string().c_str());
    return 1;
  }
  if (w.ranks() != 2) {
    std::fprintf(stderr, "bench_net: run with mpirun -np 2 (got %d ranks)\n", w.ranks());
    (void)w.close();
    MPI_Finalize();
    return 2;
  }
  const int rank = w.rank();
  Stats rt, self_rt;
  AfterTask after;
  std::vector<Bw> bw;
  if (rank == 0) {
    std::vector<double> v;
    ChipTaskArgs none;
    for (int i = 0; i < iters + iters / 10; ++i) {
      const uint64_t t0 = mono_ns();
      s = w.run([&](Orchestrator& o) { return o.submit_next_level(noop, none, 1); });
      if (!s.ok()) break;
      if (i >= iters / 10) v.push_back((mono_ns() - t0) / 1e3);
    }
    rt = summarise(v);
    // The same task on rank 0 itself: caller, scheduler, progress thread,
    // MPI to self, executor and back, without a second process.
    v.clear();
    for (int i = 0; i < (round_trip_only ? 0 : iters + iters / 10) && s.ok(); ++i) {
      const uint64_t t0 = mono_ns();
      s = w.run([&](Orchestrator& o) { return o.submit_next_level(noop, none, 0); });
      if (i >= iters / 10) v.push_back((mono_ns() - t0) / 1e3);
    }
    self_rt = summarise(v);
    if (s.ok() && !round_trip_only) s = after_task(w, noop, iters / 2, &after);
    for (uint64_t n : sizes) {
      auto b = w.remote_malloc(1, n);
      if (!b.ok()) {
        s = b.status();
        break;
      }
      std::vector<char> host(n, 1);
      std::vector<double> put, fetch;
      const int reps = std::max(3, static_cast<int>((quick ? 8 : 64) * (1u << 20) / std::max<uint64_t>(n, 1u << 16)));
      for (int i = 0; i < reps + 1 && s.ok(); ++i) {
        uint64_t t0 = mono_ns();
        s = w.remote_copy_to(b->whole(), host.data());
        if (i) put.push_back((mono_ns() - t0) / 1e3);
        t0 = mono_ns();
        if (s.ok()) s = w.remote_copy_from(host.data(), b->whole());
        if (i) fetch.push_back((mono_ns() - t0) / 1e3);
      }
      bw.push_back(Bw{n, gbs(n, summarise(put).median_us), gbs(n, summarise(fetch).median_us), 0});
      if (s.ok()) s = w.remote_free(*b);
    }
    if (!s.ok()) std::fprintf(stderr, "bench_net: taskring phase: %s\n", s.to_string().c_str());
  } else {
    s = w.serve();
  }
  Status c = w.close();
  if (!c.ok()) std::fprintf(stderr, "bench_net: close: %s\n", c.to_string().c_str());

  // ---- raw MPI, same processes ----
  Stats floor;
  {
    std::vector<double> v;
    char msg[8] = {};
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < iters + iters / 10; ++i) {
      const uint64_t t0 = mono_ns();
      if (rank == 0) {
        MPI_Send(msg, 8, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
        MPI_Recv(msg, 8, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(msg, 8, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(msg, 8, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
      }
      if (i >= iters / 10) v.push_back((mono_ns() - t0) / 1e3);
    }
    floor = summarise(v);
  }
  for (size_t k = 0; k < sizes.size(); ++k) {
    const uint64_t n = sizes[k];
    std::vector<char> buf(n, 2);
    char ack = 0;
    std::vector<double> v;
    const int reps = std::max(3, static_cast<int>((quick ? 8 : 64) * (1u << 20) / std::max<uint64_t>(n, 1u << 16)));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < reps + 1; ++i) {
      const uint64_t t0 = mono_ns();
      if (rank == 0) {
        MPI_Send(buf.data(), static_cast<int>(n), MPI_BYTE, 1, 8, MPI_COMM_WORLD);
        MPI_Recv(&ack, 1, MPI_BYTE, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf.data(), static_cast<int>(n), MPI_BYTE, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&ack, 1, MPI_BYTE, 0, 9, MPI_COMM_WORLD);
      }
      if (i) v.push_back((mono_ns() - t0) / 1e3);
    }
    if (rank == 0 && k < bw.size()) bw[k].mpi_gbs = gbs(n, summarise(v).median_us);
  }
  // One thread wake, for scale: two threads of rank 0 hand a token back and
  // forth through Waiters (spin, then futex); a round trip is two wakes.
  Stats hop;
  if (rank == 0 && !round_trip_only) {
    std::atomic<int> turn{0};
    Waiter wa, wb;
    const int n = iters;
    std::thread other([&] {
      for (int i = 0; i < n + n / 10; ++i) {
        (void)wb.wait([&] { return turn.load(std::memory_order_acquire) == 1; }, Deadline::after_ms(10000), "ping");
        turn.store(0, std::memory_order_release);
        wa.notify_all();
      }
    });
    std::vector<double> v;
    for (int i = 0; i < n + n / 10; ++i) {
      const uint64_t t0 = mono_ns();
      turn.store(1, std::memory_order_release);
      wb.notify_all();
      (void)wa.wait([&] { return turn.load(std::memory_order_acquire) == 0; }, Deadline::after_ms(10000), "pong");
      if (i >= n / 10) v.push_back((mono_ns() - t0) / 1e3);
    }
    other.join();
    hop = summarise(v);
  }
  const std::string load_after = loadavg();
  if (rank == 0) {
    std::printf("bench_net, 2 ranks, poll window %llu us, fast paths %s  (loadavg before: %s; after: %s)\n\n",
                static_cast<unsigned long long>(poll_window_us), fast_paths ? "on" : "off", load_before.c_str(),
                load_after.c_str());
    std::printf("(a) round trip, µs                 median      p99\n");
    std::printf("    MPI ping-pong 8 B (floor)    %8.2f %8.2f\n", floor.median_us, floor.p99_us);
    std::printf("    L4 remote task (no-op)       %8.2f %8.2f   (%.2fx floor; goal <= 2x)\n", rt.median_us, rt.p99_us,
                floor.median_us > 0 ? rt.median_us / floor.median_us : 0);
    std::printf("    breakdown: L4 task on rank 0 %8.2f %8.2f   (no second process)\n", self_rt.median_us,
                self_rt.p99_us);
    std::printf("    breakdown: thread ping-pong  %8.2f %8.2f   (two futex wakes, one process)\n\n", hop.median_us,
                hop.p99_us);
    std::printf("(b) bandwidth, GB/s       PUT    FETCH     MPI   PUT/MPI FETCH/MPI (goal >= 0.8 at >= 1 MiB)\n");
    for (const Bw& b : bw)
      std::printf("    %9llu B     %7.3f  %7.3f  %7.3f   %5.2f   %5.2f\n", static_cast<unsigned long long>(b.bytes),
                  b.put_gbs, b.fetch_gbs, b.mpi_gbs, b.mpi_gbs > 0 ? b.put_gbs / b.mpi_gbs : 0,
                  b.mpi_gbs > 0 ? b.fetch_gbs / b.mpi_gbs : 0);
    std::printf("\n");
    std::printf("(c) after a task on the owner, µs  median      p99\n");
    std::printf("    PUT 4 KiB                    %8.2f %8.2f\n", after.put.median_us, after.put.p99_us);
    std::printf("    FETCH 4 KiB                  %8.2f %8.2f\n", after.fetch.median_us, after.fetch.p99_us);
    std::printf("    the task, after a transfer   %8.2f %8.2f\n", after.task.median_us, after.task.p99_us);
    if (!json_path.empty()) {
      std::ofstream j(json_path);
      j << "{\n  \"bench\": \"net\",\n  \"ranks\": 2,\n  \"quick\": " << (quick ? "true" : "false")
        << ",\n  \"loadavg_before\": \"" << load_before << "\",\n  \"loadavg_after\": \"" << load_after
        << "\",\n  \"round_trip_us\": {\"mpi_floor_median\": " << floor.median_us
        << ", \"mpi_floor_p99\": " << floor.p99_us << ", \"l4_task_median\": " << rt.median_us
        << ", \"l4_task_p99\": " << rt.p99_us << ", \"l4_self_task_median\": " << self_rt.median_us
        << ", \"thread_ping_pong_median\": " << hop.median_us << ", \"poll_window_us\": " << poll_window_us
        << ", \"fast_paths\": " << (fast_paths ? "true" : "false")
        << ", \"ratio\": " << (floor.median_us > 0 ? rt.median_us / floor.median_us : 0)
        << "},\n  \"after_task_us\": {\"put_4k_median\": " << after.put.median_us
        << ", \"put_4k_p99\": " << after.put.p99_us << ", \"fetch_4k_median\": " << after.fetch.median_us
        << ", \"fetch_4k_p99\": " << after.fetch.p99_us << ", \"task_after_transfer_median\": " << after.task.median_us
        << ", \"task_after_transfer_p99\": " << after.task.p99_us << "},\n  \"bandwidth_gbs\": [";
      for (size_t k = 0; k < bw.size(); ++k)
        j << (k ? ", " : "") << "\n    {\"bytes\": " << bw[k].bytes << ", \"put\": " << bw[k].put_gbs
          << ", \"fetch\": " << bw[k].fetch_gbs << ", \"mpi\": " << bw[k].mpi_gbs << "}";
      j << "\n  ]\n}\n";
    }
  }
  MPI_Finalize();
  return s.ok() && c.ok() ? 0 : 1;
}
