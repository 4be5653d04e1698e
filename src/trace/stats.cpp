#include "taskring/trace/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace taskring::trace {

namespace {
// end - begin for end >= begin, exact in uint64 whatever the signs.
uint64_t span_of(int64_t begin, int64_t end) { return static_cast<uint64_t>(end) - static_cast<uint64_t>(begin); }
}  // namespace

int64_t union_length(std::vector<Window> windows) {
  std::sort(windows.begin(), windows.end(), [](const Window& a, const Window& b) { return a.begin < b.begin; });
  // Disjoint pieces of [INT64_MIN, INT64_MAX] sum to at most 2^64 - 1; the
  // result saturates at INT64_MAX rather than wrapping.
  uint64_t total = 0;
  bool open = false;
  Window cur;
  for (const Window& w : windows) {
    if (w.end <= w.begin) continue;
    if (open && w.begin <= cur.end) {
      cur.end = std::max(cur.end, w.end);
      continue;
    }
    if (open) total += span_of(cur.begin, cur.end);
    cur = w;
    open = true;
  }
  if (open) total += span_of(cur.begin, cur.end);
  return total > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(total);
}

Summary summarize(std::vector<double> v) {
  Summary s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  const size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(n);
  if (n >= 2) {
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.stdev = std::sqrt(ss / static_cast<double>(n - 1));
  }
  if (n > 20) {
    size_t k = n / 10;
    s.has_trimmed = true;
    s.trimmed_each_side = k;
    s.trimmed_mean = std::accumulate(v.begin() + static_cast<ptrdiff_t>(k), v.end() - static_cast<ptrdiff_t>(k), 0.0) /
                     static_cast<double>(n - 2 * k);
  }
  return s;
}

}  // namespace taskring::trace
