#include "taskring/base/host_speed.hpp"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

#include "taskring/base/status.hpp"

namespace taskring {
namespace {

constexpr int kChunks = 64;
constexpr int kWarmupChunks = 4;

// Multiply-adds streaming over 16 KiB that stays in L1, vectorised: a
// throughput-bound chunk, as the kernels are. (A latency-bound chain of
// dependent operations would miss the slow phases: a busy SMT sibling on the
// host takes issue slots that such a chain leaves unused. Measured on the
// 2-vCPU Intel guest: this chunk 8.6 vs 15-17 us in the two phases, a
// dependent chain 11.2-13.3 us in the same minutes.)
[[gnu::noinline]] float chunk(float seed) {
  alignas(64) float buf[4096];
  for (int k = 0; k < 4096; ++k) buf[k] = seed;
  for (int r = 0; r < 20; ++r)
    for (int k = 0; k < 4096; ++k) buf[k] = buf[k] * 0.999f + 1.0f;
  return buf[seed > 0 ? 17 : 4095];
}

double time_cpu(Deadline deadline, volatile float* sink) {
  std::vector<double> us;
  us.reserve(kChunks);
  for (int i = 0; i < kWarmupChunks + kChunks; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    *sink = chunk(*sink + 1.0f);
    const auto t1 = std::chrono::steady_clock::now();
    if (i >= kWarmupChunks) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    if (!us.empty() && deadline.expired()) break;
  }
  std::nth_element(us.begin(), us.begin() + static_cast<std::ptrdiff_t>(us.size() / 2), us.end());
  return us[us.size() / 2];
}

}  // namespace

Expected<std::vector<CpuSpeed>> probe_cpu_speed(int max_cpus, Deadline deadline) {
  if (max_cpus < 1) return invalid_argument("probe_cpu_speed: max_cpus must be >= 1, got " + std::to_string(max_cpus));
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) != 0)
    return unavailable(std::string("probe_cpu_speed: sched_getaffinity: ") + std::strerror(errno));
  std::vector<CpuSpeed> out;
  volatile float sink = 1.0f;
  for (int cpu = 0; cpu < CPU_SETSIZE && static_cast<int>(out.size()) < max_cpus; ++cpu) {
    if (!CPU_ISSET(cpu, &mask)) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof(one), &one) != 0) continue;  // offline since the mask was read
    out.push_back({cpu, time_cpu(deadline, &sink)});
  }
  if (sched_setaffinity(0, sizeof(mask), &mask) != 0)
    return unavailable(std::string("probe_cpu_speed: restoring the affinity mask: ") + std::strerror(errno));
  if (out.empty()) return unavailable("probe_cpu_speed: no CPU of the affinity mask accepted the thread");
  return out;
}

double largest_speed_change(const std::vector<CpuSpeed>& before, const std::vector<CpuSpeed>& after) {
  double worst = 0;
  for (const CpuSpeed& b : before)
    for (const CpuSpeed& a : after)
      if (a.cpu == b.cpu && a.node == b.node && b.chunk_us > 0)
        worst = std::max(worst, std::fabs(a.chunk_us / b.chunk_us - 1.0));
  return worst;
}

}  // namespace taskring
