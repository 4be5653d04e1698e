// The dependency component per access: one lookup (for_each_dependency) and
// one insert of one tensor access, the work a submit does per tracked tensor.
//
//   bench_deps [--json FILE] [--accesses N] [--reps R]
//
// Patterns, each on the tracker that serves it:
//   TensorMap (tmr, L3, L4; tasks complete while others are submitted: owner
//   records are reused from a ring of 256 and complete 64 tasks after their
//   submit, as a runtime's window would):
//     chain        every task INOUT on one whole buffer (covers its producer)
//     independent  task i writes buffer i % 1024 (the producer there is done)
//     fanout       per 8 tasks one writer of a 64-row buffer, then 7 readers
//     views        writers of 128 disjoint rows of one buffer, round robin
//                  (more than 32 live writers: the bucket's start index)
//   BuildTracker (hbg, Graph recording; nothing completes, a build of 4096
//   tasks, then reset):
//     chain, independent  as above
// Thread CPU time per access, median of R batches of N accesses (after one
// warm-up batch); the accesses' descriptors are made before the clock runs
// (one period of 4096 accesses, reused). Single-threaded, like the
// submitting thread that owns a tracker.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "deps/build_tracker.hpp"
#include "deps/tensor_map.hpp"
#include "deps_bench_util.hpp"
#include "load_average.hpp"

namespace {

using taskring::ChipTensor;
using taskring::deps::Owner;

ChipTensor buffer(uint64_t addr, uint32_t rows) {
  const uint32_t shape[2] = {rows, 64};
  return *taskring::try_make_tensor(addr, uint64_t{rows} * 64 * 4, std::span<const uint32_t>(shape, 2),
                                    taskring::DataType::FLOAT32);
}
using taskring::bench::row_of;

// Access i of a pattern: the tensor and whether it writes.
struct Access {
  ChipTensor t;
  bool writer;
};
using Pattern = Access (*)(uint64_t i);

Access chain(uint64_t) { return {buffer(0x100000, 64), true}; }
Access independent(uint64_t i) { return {buffer(0x100000 + (i % 1024) * 0x10000, 1), true}; }
Access fanout(uint64_t i) { return {row_of(buffer(0x100000, 64), static_cast<uint32_t>(i / 8 % 64)), i % 8 == 0}; }
Access views(uint64_t i) { return {row_of(buffer(0x100000, 128), static_cast<uint32_t>(i % 128)), true}; }

// Median ns per access over `reps` batches; `step(i)` does access i.
template <typename Step>
double median_ns(uint64_t accesses, int reps, Step&& step) {
  uint64_t i = 0;
  for (uint64_t k = 0; k < accesses; ++k) step(i++);  // warm-up batch
  std::vector<double> batches;
  for (int r = 0; r < reps; ++r) {
    const double t0 = taskring::bench::thread_cpu_s();
    for (uint64_t k = 0; k < accesses; ++k) step(i++);
    batches.push_back((taskring::bench::thread_cpu_s() - t0) / static_cast<double>(accesses) * 1e9);
  }
  std::sort(batches.begin(), batches.end());
  return batches[batches.size() / 2];
}

uint64_t g_sink = 0;  // dependencies found, printed so nothing is optimised away

// One period of a pattern (every pattern's period divides it).
constexpr uint64_t kPeriod = 4096;
std::vector<Access> period_of(Pattern p) {
  std::vector<Access> v;
  for (uint64_t i = 0; i < kPeriod; ++i) v.push_back(p(i));
  return v;
}

double time_tensor_map(Pattern p, uint64_t accesses, int reps) {
  constexpr uint64_t kRing = 256, kLag = 64;
  const std::vector<Access> period = period_of(p);
  std::vector<Owner> ring(kRing);
  taskring::deps::TensorMap map;
  return median_ns(accesses, reps, [&](uint64_t i) {
    if (i >= kLag) ring[(i - kLag) % kRing].completed.store(true, std::memory_order_release);
    Owner& o = ring[i % kRing];
    o.seq = i + 1;
    o.id = taskring::PTO2TaskId{i};
    o.completed.store(false, std::memory_order_relaxed);
    const Access& a = period[i % kPeriod];
    map.for_each_dependency(a.t, a.writer, [&](Owner* d) { g_sink += d->id.raw; });
    map.insert(a.t, &o, a.writer);
  });
}

double time_build_tracker(Pattern p, uint64_t accesses, int reps) {
  constexpr uint64_t kBuild = 4096;
  const std::vector<Access> period = period_of(p);
  taskring::deps::BuildTracker tracker;
  return median_ns(accesses, reps, [&](uint64_t i) {
    if (i % kBuild == 0) tracker.reset();
    const Access& a = period[i % kPeriod];
    tracker.for_each_dependency(a.t, a.writer, [&](int32_t d) { g_sink += static_cast<uint64_t>(d); });
    tracker.insert(a.t, static_cast<int32_t>(i % kBuild), a.writer);
  });
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  uint64_t accesses = 20000;
  int reps = 7;
  for (int i = 1; i < argc; i += 2) {
    const bool has_value = i + 1 < argc;
    if (has_value && !std::strcmp(argv[i], "--json"))
      json_path = argv[i + 1];
    else if (has_value && !std::strcmp(argv[i], "--accesses"))
      accesses = std::max(1, std::atoi(argv[i + 1]));
    else if (has_value && !std::strcmp(argv[i], "--reps"))
      reps = std::max(1, std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: bench_deps [--json FILE] [--accesses N] [--reps R]\n");
      return 2;
    }
  }
  struct Row {
    const char* tracker;
    const char* pattern;
    double ns;
  };
  const std::string load_before = taskring::bench::loadavg();
  std::vector<Row> rows = {
      {"TensorMap", "chain", time_tensor_map(chain, accesses, reps)},
      {"TensorMap", "independent", time_tensor_map(independent, accesses, reps)},
      {"TensorMap", "fanout", time_tensor_map(fanout, accesses, reps)},
      {"TensorMap", "views", time_tensor_map(views, accesses, reps)},
      {"BuildTracker", "chain", time_build_tracker(chain, accesses, reps)},
      {"BuildTracker", "independent", time_build_tracker(independent, accesses, reps)},
  };
  const std::string load_after = taskring::bench::loadavg();
  std::printf("dependency component: one lookup + one insert per access\n");
  std::printf("thread CPU time, median of %d batches of %llu accesses; loadavg %s -> %s\n\n", reps,
              static_cast<unsigned long long>(accesses), load_before.c_str(), load_after.c_str());
  std::printf("%-14s %-12s %12s\n", "tracker", "pattern", "ns/access");
  nlohmann::json j = {{"accesses_per_batch", accesses},
                      {"reps", reps},
                      {"loadavg_before", load_before},
                      {"loadavg_after", load_after},
                      {"rows", nlohmann::json::array()}};
  for (const Row& r : rows) {
    std::printf("%-14s %-12s %12.1f\n", r.tracker, r.pattern, r.ns);
    j["rows"].push_back({{"tracker", r.tracker}, {"pattern", r.pattern}, {"ns_per_access", r.ns}});
  }
  std::printf("\n(checksum %llu)\n", static_cast<unsigned long long>(g_sink));
  if (!json_path.empty()) std::ofstream(json_path) << j.dump(2) << "\n";
  return 0;
}
