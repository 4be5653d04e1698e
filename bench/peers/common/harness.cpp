#include "harness.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "counter.hpp"

namespace peers {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

}  // namespace

int run_patterns(const Options& opts, const RuntimeInfo& info, const Prepare& prepare) {
  int failures = 0;
  if (!opts.wants_row(info.runtime)) return 0;
  for (Pattern p : opts.patterns) {
    Rep rep = prepare(p, opts.tasks);
    const std::size_t tasks = rep.tasks ? rep.tasks : opts.tasks;
    std::vector<double> samples;
    uint64_t bad_count = 0;
    bool valid = true;
    for (int r = 0; r < opts.warmup + opts.reps; ++r) {
      reset_executed();
      uint64_t ns = rep.run();
      uint64_t done = executed_tasks();
      if (done != tasks) {
        valid = false;
        bad_count = done;
      }
      if (r >= opts.warmup) samples.push_back(static_cast<double>(ns) / static_cast<double>(tasks));
    }
    if (rep.teardown) rep.teardown();
    nlohmann::json line = {
        {"schema", "taskring.bench.overhead/1"},
        {"runtime", info.runtime},
        {"version", info.version},
        {"pattern", std::string(name(p))},
        {"tasks", tasks},
        {"reps", opts.reps},
        {"warmup", opts.warmup},
        {"threads", opts.threads},
        {"ns_per_task", median(samples)},
        {"ns_per_task_min", *std::min_element(samples.begin(), samples.end())},
        {"ns_per_task_max", *std::max_element(samples.begin(), samples.end())},
        {"samples_ns_per_task", samples},
        {"valid", valid},
        {"config", info.config},
        {"extra", rep.extra},
    };
    if (!valid) {
      line["error"] = "executed " + std::to_string(bad_count) + " tasks, submitted " + std::to_string(tasks);
      ++failures;
      std::fprintf(stderr, "%s/%s: %s\n", info.runtime.c_str(), std::string(name(p)).c_str(),
                   line["error"].get<std::string>().c_str());
    }
    std::printf("%s\n", line.dump().c_str());
    std::fflush(stdout);
  }
  return failures;
}

}  // namespace peers
