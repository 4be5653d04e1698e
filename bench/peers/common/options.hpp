// Command line shared by every bench_overhead_* binary:
//   --tasks N      tasks per pattern (default 100000)
//   --reps R       timed repetitions per pattern (default 5); the median is reported
//   --warmup W     untimed repetitions first (default 1)
//   --pattern P    comma-separated subset of chain,independent,mix8,fanout (default all)
//   --threads T    worker threads, 0 = hardware threads (default 0)
//   --rows R       comma-separated subset of the binary's rows, by their "runtime"
//                  names (default all); profiling one row alone needs it
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "patterns.hpp"

namespace peers {

struct Options {
  std::size_t tasks = 100000;
  int reps = 5;
  int warmup = 1;
  int threads = 0;  // resolved to hardware threads by parse_options
  std::vector<Pattern> patterns;
  std::vector<std::string> rows;  // empty: every row

  // Whether the row named `runtime` (RuntimeInfo::runtime) is to run.
  bool wants_row(const std::string& runtime) const;
};

// Parses argv; on --help or a bad value (a --rows name not in `rows`, the
// binary's row names) prints usage and exits (0 or 2).
Options parse_options(int argc, char** argv, const char* description, const std::vector<std::string>& rows);

}  // namespace peers
