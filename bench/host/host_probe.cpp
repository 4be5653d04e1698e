// bench_host: the host's floor under the node benchmarks.
//
//   hand-off: two threads, or two processes, pinned to one CPU or to two,
//     pass a token back and forth with a shared futex or with sched_yield;
//     microseconds per hand-off. A chip process that waits for a peer pays
//     this for every switch.
//   rounds: one thread per CPU runs the same fixed compute-and-copy chunk,
//     a spin barrier between chunks; a round lasts as long as the slower of
//     the two (as a step that every rank must finish). Reported: the round
//     median, its coefficient of variation, the standard deviation of the
//     medians of 8 consecutive rounds, and the share of consecutive triples
//     of those medians within 5 % — the statistic `taskring bench moe`'s
//     Done-when asks for, on a workload with no process switches at all.
//
//   --probe: the rounds only (24 of a ~4x shorter chunk, ~25 ms), as one JSON
//     line on stdout: a host-speed control to run next to each run of a
//     series (bench/node/moe_series.py).
//
// Prints a table; --json FILE also writes the numbers.
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "load_average.hpp"

namespace {

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  return sched_setaffinity(0, sizeof s, &s) == 0;
}

void futex_wait(std::atomic<int>* a, int v) { syscall(SYS_futex, a, FUTEX_WAIT, v, nullptr, nullptr, 0); }
void futex_wake(std::atomic<int>* a) { syscall(SYS_futex, a, FUTEX_WAKE, 1, nullptr, nullptr, 0); }

// Side 0 moves the token from even to odd values, side 1 back.
void play(std::atomic<int>* token, int side, int n, bool yield) {
  for (int i = 0; i < n; ++i) {
    const int want = 2 * i + side;
    while (true) {
      const int v = token->load();
      if (v == want) break;
      if (yield)
        sched_yield();
      else
        futex_wait(token, v);
    }
    token->store(want + 1);
    if (!yield) futex_wake(token);
  }
}

struct HandOff {
  std::string peers, cpus, wait;
  double us = 0;
};

HandOff hand_off(bool processes, bool same_cpu, bool yield, int n) {
  auto* token =
      static_cast<std::atomic<int>*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  new (token) std::atomic<int>(0);
  const int other = same_cpu ? 0 : 1;
  const double t0 = now_us();
  if (processes) {
    const pid_t p = fork();
    if (p == 0) {
      pin(other);
      play(token, 1, n, yield);
      _exit(0);
    }
    pin(0);
    play(token, 0, n, yield);
    waitpid(p, nullptr, 0);
  } else {
    std::thread a([&] {
      pin(0);
      play(token, 0, n, yield);
    });
    std::thread b([&] {
      pin(other);
      play(token, 1, n, yield);
    });
    a.join();
    b.join();
  }
  const double us = (now_us() - t0) / (2.0 * n);
  munmap(token, 4096);
  return {processes ? "processes" : "threads", same_cpu ? "one CPU" : "two CPUs", yield ? "sched_yield" : "futex", us};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double sd(const std::vector<double>& v) {
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

struct Rounds {
  double median_us = 0, cv = 0, block_sd = 0, triples_within_5 = 0;
};

Rounds lockstep_rounds(int n, int chunk_reps) {
  std::vector<double> t[2];
  std::atomic<int> arrived{0};
  auto run = [&](int cpu) {
    pin(cpu);
    std::vector<float> a(1 << 13, 1.0f), b(1 << 13, 0.5f);  // a stays in [0.5, 1]: no denormals, no infinities
    t[cpu].resize(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      arrived.fetch_add(1);
      while (arrived.load() < 2 * (r + 1)) {
      }
      const double t0 = now_us();
      for (int k = 0; k < chunk_reps; ++k) {  // 240: ~400 us on the AMD guest, about an 8-chip MoE step
        for (size_t i = 0; i < a.size(); ++i) a[i] = a[i] * 0.5f + b[i] * 0.5f;
        std::memcpy(b.data(), a.data(), a.size() * sizeof(float));
      }
      t[cpu][static_cast<size_t>(r)] = now_us() - t0;
    }
  };
  std::thread x(run, 0), y(run, 1);
  x.join();
  y.join();
  std::vector<double> round(static_cast<size_t>(n));
  for (size_t r = 0; r < round.size(); ++r) round[r] = std::max(t[0][r], t[1][r]);
  std::vector<double> blocks;
  for (size_t i = 0; i + 8 <= round.size(); i += 8)
    blocks.push_back(
        median(std::vector<double>(round.begin() + static_cast<long>(i), round.begin() + static_cast<long>(i) + 8)));
  int ok = 0, all = 0;
  for (size_t i = 0; i + 3 <= blocks.size(); ++i, ++all) {
    const double lo = std::min({blocks[i], blocks[i + 1], blocks[i + 2]});
    const double hi = std::max({blocks[i], blocks[i + 1], blocks[i + 2]});
    ok += (hi - lo) / lo <= 0.05;
  }
  return {median(round), sd(round) / mean(round), sd(blocks) / mean(blocks), all ? double(ok) / all : 0};
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  int rounds = 2000;
  bool probe = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::max(24, std::atoi(argv[++i]));
    } else if (a == "--probe") {
      probe = true;
    } else {
      std::fprintf(stderr, "usage: bench_host [--rounds N (>= 24, default 2000)] [--json FILE] | --probe\n");
      return 2;
    }
  }
  if (std::thread::hardware_concurrency() < 2 || !pin(1) || !pin(0)) {
    std::fprintf(stderr, "bench_host: needs CPUs 0 and 1\n");
    return 2;
  }
  if (probe) {
    const Rounds r = lockstep_rounds(24, 60);
    std::printf("{\"lockstep_median_us\": %.2f, \"cv\": %.4f}\n", r.median_us, r.cv);
    return 0;
  }
  const std::string load_before = taskring::bench::loadavg();
  std::vector<HandOff> h;
  for (bool processes : {false, true})
    for (bool same : {true, false})
      for (bool yield : {false, true})
        if (same || !yield) h.push_back(hand_off(processes, same, yield, 20000));
  const Rounds r = lockstep_rounds(rounds, 240);
  std::printf("hand-off (us each)       futex on one CPU   sched_yield on one CPU   futex across two CPUs\n");
  for (const char* who : {"threads", "processes"}) {
    double v[3] = {};
    for (const HandOff& x : h) {
      if (x.peers != who) continue;
      v[x.cpus == "two CPUs" ? 2 : x.wait == "futex" ? 0 : 1] = x.us;
    }
    std::printf("  %-22s %16.2f %24.2f %23.2f\n", who, v[0], v[1], v[2]);
  }
  std::printf(
      "lockstep rounds on CPUs 0 and 1 (%d rounds): median %.0f us, cv %.1f %%, sd of 8-round medians %.1f %%, "
      "triples of those within 5 %%: %.0f %%\n",
      rounds, r.median_us, 100 * r.cv, 100 * r.block_sd, 100 * r.triples_within_5);
  std::printf("load average before: %s\n", load_before.c_str());
  if (!json_path.empty()) {
    std::ofstream j(json_path);
    j << "{\n  \"load_average_before\": \"" << load_before << "\",\n  \"hand_off_us\": [\n";
    for (size_t i = 0; i < h.size(); ++i)
      j << "    {\"peers\": \"" << h[i].peers << "\", \"cpus\": \"" << h[i].cpus << "\", \"wait\": \"" << h[i].wait
        << "\", \"us\": " << h[i].us << "}" << (i + 1 < h.size() ? "," : "") << "\n";
    j << "  ],\n  \"lockstep_rounds\": {\"rounds\": " << rounds << ", \"median_us\": " << r.median_us
      << ", \"cv\": " << r.cv << ", \"block8_median_sd\": " << r.block_sd
      << ", \"block8_triples_within_5pct\": " << r.triples_within_5 << "}\n}\n";
  }
  return 0;
}
