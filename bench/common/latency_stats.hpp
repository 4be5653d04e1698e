// Median and 99th percentile of a latency sample, shared by the benchmarks
// that time round trips (bench_node, bench_net).
#pragma once

#include <algorithm>
#include <vector>

namespace taskring::bench {

struct LatencyStats {
  double median_us = 0, p99_us = 0;
};

// Both fields stay 0 for an empty sample. Takes the sample by value: it sorts.
inline LatencyStats summarise(std::vector<double> samples_us) {
  LatencyStats s;
  if (samples_us.empty()) return s;
  std::sort(samples_us.begin(), samples_us.end());
  s.median_us = samples_us[samples_us.size() / 2];
  s.p99_us = samples_us[std::min(samples_us.size() - 1, samples_us.size() * 99 / 100)];
  return s;
}

}  // namespace taskring::bench
