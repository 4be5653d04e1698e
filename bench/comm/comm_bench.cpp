// bench_comm: the comm domain's collectives on the node (issue 17),
// measured inside the chip processes:
//   (a) allreduce bus bandwidth, 2(n-1)/n · bytes / time, per algorithm
//       (one-phase, ring, direct, auto), size and rank count; time = the slowest rank's
//       time per allreduce over R back-to-back allreduces in one kernel
//       (ProbeOp::kTimedAllreduce), after a barrier;
//   (b) barrier latency (ProbeOp::kTimedBarrier), per rank count;
//   (c) the machine's memcpy bandwidth (one thread), from which the
//       physical limit of an n-rank allreduce on `cores` cores is
//       memcpy_bw · cores / n (each rank must at least read its peers'
//       data once).
// Open MPI's MPI_Allreduce / MPI_Barrier are measured by bench_comm_mpi in
// the same run (bench/comm/run_comm_bench). Prints a table; --json FILE
// writes the numbers. Quote `uptime` beside any number.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "taskring/base/clock.hpp"
#include "taskring/log/init.hpp"
#include "taskring/node/collectives.hpp"
#include "taskring/node/node_worker.hpp"

using namespace taskring;
using namespace taskring::node;
using kernels::ProbeOp;

namespace {

struct Args {
  std::vector<int> ranks = {2, 4, 8};
  std::vector<uint64_t> bytes = {4096, 65536, 1 << 20, 4 << 20};
  std::string json;
  int samples = 5;
};

double memcpy_gbps() {
  const size_t n = 64 << 20;
  std::vector<char> a(n, 1), b(n, 2);
  double best = 0;
  for (int i = 0; i < 5; ++i) {
    const uint64_t t0 = mono_ns();
    std::memcpy(b.data(), a.data(), n);
    const uint64_t dt = mono_ns() - t0;
    best = std::max(best, static_cast<double>(n) / static_cast<double>(dt));
    a[i] = b[n - 1 - i];  // keep the copies observable
  }
  return best;  // bytes per ns = GB/s
}

struct Row {
  int ranks;
  std::string what;  // "onephase" | "ring" | "barrier"
  uint64_t bytes;
  double us;        // per operation (median over samples of the slowest rank)
  double bus_gbps;  // allreduce only
};

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "--json" && i + 1 < argc)
      a.json = argv[++i];
    else if (s == "--samples" && i + 1 < argc)
      a.samples = std::max(1, std::atoi(argv[++i]));
    else if (s == "--ranks" && i + 1 < argc)
      a.ranks = {std::atoi(argv[++i])};
    else if (s == "--bytes" && i + 1 < argc) {
      // Comma-separated allreduce sizes; "none" measures the barrier only.
      a.bytes.clear();
      for (std::string_view v = argv[++i]; !v.empty() && v != "none";) {
        const size_t c = v.find(',');
        a.bytes.push_back(std::strtoull(std::string(v.substr(0, c)).c_str(), nullptr, 10));
        v = c == std::string_view::npos ? std::string_view{} : v.substr(c + 1);
      }
    } else {
      std::fprintf(stderr, "usage: bench_comm [--json FILE] [--samples N] [--ranks N] [--bytes B,B,...|none]\n");
      return 2;
    }
  }
  (void)log::init_logging(process_env());
  const double mbw = memcpy_gbps();
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::vector<Row> rows;
  for (int n : a.ranks) {
    NodeConfig cfg;
    cfg.chips = n;
    cfg.chip_threads = 1;
    cfg.heap_ring_bytes = 1 << 20;
    const uint64_t max_bytes = *std::max_element(a.bytes.begin(), a.bytes.end());
    cfg.shared_bytes = static_cast<uint64_t>(n) * (2 * max_bytes + 4096) + (1 << 20);
    NodeWorker w(cfg);
    const int comm = *w.register_chip(comm_call_callable());
    Status s = w.init();
    if (!s.ok()) {
      std::fprintf(stderr, "bench_comm: %s\n", s.to_string().c_str());
      return 1;
    }
    std::vector<uint64_t*> times(n);
    std::vector<ChipTensor> tt(n), in(n), out(n);
    for (int r = 0; r < n; ++r) {
      times[r] = static_cast<uint64_t*>(*w.alloc_shared(8));
      tt[r] = make_tensor_external(times[r], {1}, DataType::UINT64);
      void* i = *w.alloc_shared(max_bytes);
      void* o = *w.alloc_shared(max_bytes);
      std::memset(i, 0, max_bytes);
      in[r] = make_tensor_external(i, {static_cast<uint32_t>(max_bytes / 4)});
      out[r] = make_tensor_external(o, {static_cast<uint32_t>(max_bytes / 4)});
    }
    std::vector<int> chips(n);
    for (int r = 0; r < n; ++r) chips[r] = r;
    auto timed = [&](ProbeOp op, uint64_t reps, uint64_t bytes, uint64_t algo) -> double {
      std::vector<double> samples;
      for (int k = 0; k < a.samples; ++k) {
        const uint64_t elems = bytes / 4;
        const uint64_t scratch = std::max<uint64_t>(
            4096, kernels::collective_scratch_bytes(kernels::CollectiveOp::kAllreduceRing, elems, 4, n));
        Status st = w.run([&](Orchestrator& o) -> Status {
          const DomainBufferSpec bufs[] = {{"scratch", scratch}};
          TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_domain("bench", chips, scratch, bufs));
          std::vector<ChipTaskArgs> args(n);
          std::vector<ChipTensor> vi(n), vo(n);
          for (int r = 0; r < n; ++r) {
            if (op == ProbeOp::kTimedAllreduce) {
              const uint32_t e = static_cast<uint32_t>(elems);
              vi[r] = in[r].view({e}, {0});
              vo[r] = out[r].view({e}, {0});
              args[r].add_input(vi[r]).add_output(vo[r]);
            }
            args[r].add_output(tt[r]).add_scalar(static_cast<uint64_t>(op)).add_scalar(reps);
            if (op == ProbeOp::kTimedAllreduce) args[r].add_scalar(algo).add_scalar(*d->buffer_offset("scratch"));
          }
          return submit_comm_group(o, comm, *d, kernels::comm_id::kCommProbe, args);
        });
        if (!st.ok()) {
          std::fprintf(stderr, "bench_comm: %s\n", st.to_string().c_str());
          std::exit(1);
        }
        uint64_t worst = 0;
        for (int r = 0; r < n; ++r) worst = std::max(worst, *times[r]);
        samples.push_back(static_cast<double>(worst) / 1000.0 / static_cast<double>(reps));
      }
      std::sort(samples.begin(), samples.end());
      return samples[samples.size() / 2];
    };
    rows.push_back(Row{n, "barrier", 0, timed(ProbeOp::kTimedBarrier, 200, 0, 0), 0});
    for (uint64_t b : a.bytes)
      for (uint64_t algo : {0, 1, 2, 3}) {
        static const char* const kNames[] = {"onephase", "ring", "direct", "auto"};
        const uint64_t reps = std::clamp<uint64_t>((64ull << 20) / b, 5, 2000);
        const double us = timed(ProbeOp::kTimedAllreduce, reps, b, algo);
        const double bus = 2.0 * (n - 1) / n * static_cast<double>(b) / (us * 1000.0);
        rows.push_back(Row{n, kNames[algo], b, us, bus});
      }
    (void)w.close();
  }
  std::printf("memcpy %.2f GB/s (1 thread), %u cores\n\n", mbw, cores);
  std::printf("| ranks | op | bytes | us per op | bus GB/s | limit GB/s | of limit |\n|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    const double limit = mbw * cores / r.ranks;
    if (r.what == "barrier")
      std::printf("| %d | barrier | - | %.2f | - | - | - |\n", r.ranks, r.us);
    else
      std::printf("| %d | allreduce %s | %llu | %.2f | %.3f | %.2f | %.0f %% |\n", r.ranks, r.what.c_str(),
                  static_cast<unsigned long long>(r.bytes), r.us, r.bus_gbps, limit, 100.0 * r.bus_gbps / limit);
  }
  if (!a.json.empty()) {
    std::ofstream j(a.json);
    j << "{\"memcpy_gbps\": " << mbw << ", \"cores\": " << cores << ", \"rows\": [";
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      j << (i ? ", " : "") << "{\"impl\": \"taskring\", \"ranks\": " << r.ranks << ", \"op\": \"" << r.what
        << "\", \"bytes\": " << r.bytes << ", \"us\": " << r.us << ", \"bus_gbps\": " << r.bus_gbps << "}";
    }
    j << "]}\n";
  }
  return 0;
}
