// bench_comm: the comm domain's collectives on the node (issue 17),
// measured inside the chip processes:
//   (a) allreduce bus bandwidth, 2(n-1)/n · bytes / time, per algorithm
//       (one-phase, ring, direct, auto), size and rank count; time = the slowest rank's
//       time per allreduce over R back-to-back allreduces in one kernel
//       (ProbeOp::kTimedAllreduce), after a barrier;
//   (b) barrier latency (ProbeOp::kTimedBarrier), per rank count;
//   (c) the memcpy limit, measured in this process right before every
//       allreduce sample: `cores` threads each copy their own 64 MiB at once
//       (the memory bandwidth the cores share). An n-rank allreduce must at
//       least copy its bus bytes, 2(n-1)/n · bytes per rank, so its bus
//       bandwidth is at most memcpy_cores / n; "of limit" is the median over
//       the samples of each sample's fraction of its own limit. The figure
//       of issue 17 (one thread's memcpy times `cores`) is printed too: the
//       cores of a small VM need not double one core's memory bandwidth;
//   (d) the cross-core hand-off bandwidth (handoff_gbps), per rank count.
// Open MPI's MPI_Allreduce / MPI_Barrier are measured by bench_comm_mpi in
// the same run (bench/comm/run_comm_bench). Prints a table; --json FILE
// writes the numbers. Quote `uptime` beside any number.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
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
  std::vector<uint64_t> bytes = {4096, 65536, 1 << 20, 4 << 20, 16 << 20};
  std::vector<int> algos = {0, 1, 2, 3};  // onephase, ring, direct, auto
  std::string json;
  int samples = 5;
};

const char* const kAlgoNames[] = {"onephase", "ring", "direct", "auto"};

// Aggregate memcpy bandwidth of `threads` threads, each copying its own
// 64 MiB (larger than any cache) at the same time, once.
class Copier {
 public:
  explicit Copier(unsigned threads) : a_(threads), b_(threads) {
    for (unsigned t = 0; t < threads; ++t) a_[t].assign(kBytes, 1), b_[t].assign(kBytes, 2);
  }
  double gbps(unsigned threads) {
    std::vector<std::thread> th;
    const uint64_t t0 = mono_ns();
    for (unsigned t = 0; t < threads; ++t)
      th.emplace_back([this, t] { std::memcpy(b_[t].data(), a_[t].data(), kBytes); });
    for (std::thread& x : th) x.join();
    const uint64_t dt = mono_ns() - t0;
    for (unsigned t = 0; t < threads; ++t) a_[t][round_ % kBytes] = b_[t][kBytes - 1 - round_ % kBytes];
    ++round_;  // the copies stay observable
    return static_cast<double>(kBytes) * threads / static_cast<double>(dt);  // bytes per ns = GB/s
  }

 private:
  static constexpr size_t kBytes = 64 << 20;
  std::vector<std::vector<char>> a_, b_;
  size_t round_ = 0;
};

// GB/s of a hand-off between two cores: one thread writes 256 KiB, the
// other, pinned to another CPU, copies it out, in turns (both copies
// counted). On a KVM guest this moves with where the host places the vCPUs
// (2-vCPU AMD guest: 13-15 GB/s on one die, ~4 on two): the direct
// allreduce hands its slots over this way, so it is printed beside the
// results. 0 when the process may not run on two CPUs.
double handoff_gbps() {
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) != 0 || CPU_COUNT(&mask) < 2) return 0;
  int cpu[2] = {-1, -1};
  for (int c = 0, k = 0; c < CPU_SETSIZE && k < 2; ++c)
    if (CPU_ISSET(c, &mask)) cpu[k++] = c;
  constexpr size_t kBytes = 256 << 10;
  constexpr int kRounds = 1024;
  std::vector<char> slot(kBytes), src(kBytes, 1), dst(kBytes);
  std::atomic<int> turn{0};
  auto side = [&](int me, int c) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(c, &one);
    (void)pthread_setaffinity_np(pthread_self(), sizeof one, &one);
    for (int i = 0; i < kRounds; ++i) {
      while (turn.load(std::memory_order_acquire) != me) {
      }
      if (me == 0)
        std::memcpy(slot.data(), src.data(), kBytes);
      else
        std::memcpy(dst.data(), slot.data(), kBytes);
      turn.store(1 - me, std::memory_order_release);
    }
  };
  const uint64_t t0 = mono_ns();
  std::thread a(side, 0, cpu[0]), b(side, 1, cpu[1]);
  a.join(), b.join();
  return 2.0 * kBytes * kRounds / static_cast<double>(mono_ns() - t0);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::vector<std::string_view> split(std::string_view v) {
  std::vector<std::string_view> out;
  while (!v.empty()) {
    const size_t c = v.find(',');
    out.push_back(v.substr(0, c));
    v = c == std::string_view::npos ? std::string_view{} : v.substr(c + 1);
  }
  return out;
}

struct Row {
  int ranks;
  std::string what;  // "onephase" | "ring" | "barrier"
  uint64_t bytes;
  double us;        // per operation (median over samples of the slowest rank)
  double bus_gbps;  // allreduce only, from `us`
  double mbw1;      // one thread's memcpy GB/s (median over the samples)
  double mbw;       // `cores` threads' memcpy GB/s (median over the samples)
  double of_limit;  // median over the samples of bus GB/s / (mbw / ranks), each sample with its own memcpy
  double of_limit1; // the same against one thread's memcpy x cores
  double handoff;   // handoff_gbps() before this rank count
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
      if (std::string_view(argv[++i]) != "none")
        for (std::string_view v : split(argv[i])) a.bytes.push_back(std::strtoull(std::string(v).c_str(), nullptr, 10));
    } else if (s == "--algos" && i + 1 < argc) {
      a.algos.clear();
      for (std::string_view v : split(argv[++i])) {
        const auto* f = std::find(std::begin(kAlgoNames), std::end(kAlgoNames), v);
        if (f == std::end(kAlgoNames)) {
          std::fprintf(stderr, "bench_comm: --algos: '%.*s' is not onephase, ring, direct or auto\n",
                       static_cast<int>(v.size()), v.data());
          return 2;
        }
        a.algos.push_back(static_cast<int>(f - std::begin(kAlgoNames)));
      }
    } else {
      std::fprintf(stderr,
                   "usage: bench_comm [--json FILE] [--samples N] [--ranks N] [--bytes B,B,...|none] "
                   "[--algos onephase,ring,direct,auto]\n");
      return 2;
    }
  }
  (void)log::init_logging(process_env());
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::vector<Row> rows;
  for (int n : a.ranks) {
    NodeConfig cfg;
    cfg.chips = n;
    cfg.chip_threads = 1;
    cfg.heap_ring_bytes = 1 << 20;
    const uint64_t max_bytes = a.bytes.empty() ? 4 : *std::max_element(a.bytes.begin(), a.bytes.end());
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
    // After the forks: the children never map the copy buffers. Every sample
    // measures the memcpy limit right before it, so a sample and its limit
    // see the same host (on a shared host both move with the load).
    Copier copier(cores);
    const double handoff = handoff_gbps();
    auto timed = [&](ProbeOp op, uint64_t reps, uint64_t bytes, uint64_t algo) -> Row {
      std::vector<double> samples, m1, mc, of, of1;
      for (int k = 0; k < a.samples; ++k) {
        if (op == ProbeOp::kTimedAllreduce) {
          m1.push_back(copier.gbps(1));
          mc.push_back(copier.gbps(cores));
        }
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
        const double us = static_cast<double>(worst) / 1000.0 / static_cast<double>(reps);
        samples.push_back(us);
        if (op == ProbeOp::kTimedAllreduce) {
          const double bus = 2.0 * (n - 1) / n * static_cast<double>(bytes) / (us * 1000.0);
          of.push_back(bus / (mc.back() / n));
          of1.push_back(bus / (m1.back() * cores / n));
        }
      }
      Row r{n, "barrier", bytes, median(samples), 0, 0, 0, 0, 0, handoff};
      if (op == ProbeOp::kTimedAllreduce) {
        r.what = kAlgoNames[algo];
        r.bus_gbps = 2.0 * (n - 1) / n * static_cast<double>(bytes) / (r.us * 1000.0);
        r.mbw1 = median(m1), r.mbw = median(mc), r.of_limit = median(of), r.of_limit1 = median(of1);
      }
      return r;
    };
    rows.push_back(timed(ProbeOp::kTimedBarrier, 200, 0, 0));
    for (uint64_t b : a.bytes)
      for (int algo : a.algos) {
        const uint64_t reps = std::clamp<uint64_t>((64ull << 20) / b, 5, 2000);
        rows.push_back(timed(ProbeOp::kTimedAllreduce, reps, b, static_cast<uint64_t>(algo)));
      }
    (void)w.close();
  }
  std::printf("limit = memcpy of %u threads at once / ranks (1 thread's x %u / ranks in brackets), measured "
              "before every sample; of limit = median over the samples\n\n",
              cores, cores);
  std::printf("| ranks | op | bytes | us per op | bus GB/s | limit GB/s | of limit |\n|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    if (r.what == "barrier")
      std::printf("| %d | barrier | - | %.2f | - | - | hand-off %.1f GB/s |\n", r.ranks, r.us, r.handoff);
    else
      std::printf("| %d | allreduce %s | %llu | %.2f | %.3f | %.2f (%.2f) | %.0f %% (%.0f %%) |\n", r.ranks,
                  r.what.c_str(), static_cast<unsigned long long>(r.bytes), r.us, r.bus_gbps, r.mbw / r.ranks,
                  r.mbw1 * cores / r.ranks, 100.0 * r.of_limit, 100.0 * r.of_limit1);
  }
  if (!a.json.empty()) {
    std::ofstream j(a.json);
    j << "{\"cores\": " << cores << ", \"rows\": [";
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      j << (i ? ", " : "") << "{\"impl\": \"taskring\", \"ranks\": " << r.ranks << ", \"op\": \"" << r.what
        << "\", \"bytes\": " << r.bytes << ", \"us\": " << r.us << ", \"bus_gbps\": " << r.bus_gbps
        << ", \"memcpy1_gbps\": " << r.mbw1 << ", \"memcpy_gbps\": " << r.mbw << ", \"of_limit\": " << r.of_limit
        << ", \"of_limit1\": " << r.of_limit1 << ", \"handoff_gbps\": " << r.handoff << "}";
    }
    j << "]}\n";
  }
  return 0;
}
