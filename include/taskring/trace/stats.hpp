// Small statistics used by the trace analysis: interval unions and summaries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace taskring::trace {

// A half-open time window [begin, end) in ns.
struct Window {
  int64_t begin = 0;
  int64_t end = 0;
};

// The measure (total covered length) of the union of `windows`: overlapping
// parts count once and gaps not at all. Empty windows contribute nothing.
// Overflow-safe for any int64 bounds; saturates at INT64_MAX.
int64_t union_length(std::vector<Window> windows);

// Summary statistics of a sample. With n == 0 every field is 0 and `n` says
// why; stdev is the sample standard deviation (0 when n < 2). The trimmed mean
// drops floor(n / 10) samples from each end and is set only when n > 20.
struct Summary {
  size_t n = 0;
  double min = 0, median = 0, mean = 0, max = 0, stdev = 0;
  bool has_trimmed = false;
  double trimmed_mean = 0;
  size_t trimmed_each_side = 0;
};

Summary summarize(std::vector<double> values);

}  // namespace taskring::trace
