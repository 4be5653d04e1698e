// Runs every selected pattern through one runtime and prints one JSON line per
// pattern on stdout (format: bench/peers/README.md, "The bench_overhead_* contract").
//
// A runtime provides `prepare(pattern, n)`, returning a Rep whose `run` executes
// the n tasks once and returns the elapsed nanoseconds of the timed region.
// Setup in prepare (registering data, building a graph to replay) is not timed;
// the Rep is destroyed after the last repetition, also untimed.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "options.hpp"

namespace peers {

struct Rep {
  std::function<uint64_t()> run;
  nlohmann::json extra = nlohmann::json::object();  // runtime-specific facts for this pattern
  std::function<void()> teardown;                   // optional, untimed
  std::size_t tasks = 0;                            // tasks one `run` executes; 0 = Options::tasks
};

using Prepare = std::function<Rep(Pattern, std::size_t)>;

struct RuntimeInfo {
  std::string runtime;                               // column name, e.g. "omp-gcc"
  std::string version;                               // library / runtime version string
  nlohmann::json config = nlohmann::json::object();  // scheduler, env knobs, ...
};

// Returns the number of patterns whose executed task count differed from the
// submitted count in any repetition (0 = all sane). Exit with it non-zero.
int run_patterns(const Options& opts, const RuntimeInfo& info, const Prepare& prepare);

}  // namespace peers
