// Seeded host input data for workloads.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace taskring::workloads {

// `n` floats uniform in [lo, hi), the same for the same seed (std::mt19937_64).
inline std::vector<float> uniform_floats(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace taskring::workloads
