// TensorMap cost per submit against the number of live views of one buffer
// (issue 12, goal 2: 10 000 live disjoint views ≤ 2× the cost of one).
//
//   bench_tensor_map [--json FILE] [--ops N]
//
// For L live disjoint row views of one [L+1, 64] FP32 buffer (their tasks
// never complete, so every entry stays live), times the TensorMap work of
// one submit that writes row L: for_each_dependency (writer probe) + insert.
// The writer covers the previous entry of row L and removes it, so the map
// holds L + 1 entries throughout. Thread CPU time, median of 7 batches; the
// ratio to L = 1 is the goal's measure. Single-threaded, like the
// orchestrator that owns the map.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "deps/tensor_map.hpp"
#include "deps_bench_util.hpp"
#include "load_average.hpp"

namespace {

using taskring::ChipTensor;
using taskring::deps::Owner;

using taskring::bench::loadavg;
using taskring::bench::row_of;

struct Result {
  uint32_t live;
  double ns_per_submit;
};

Result measure(uint32_t live, int ops) {
  const uint32_t shape[2] = {live + 1, 64};
  const ChipTensor buf = *taskring::try_make_tensor(0x100000, uint64_t{live + 1} * 64 * 4,
                                                    std::span<const uint32_t>(shape, 2), taskring::DataType::FLOAT32);
  std::vector<std::unique_ptr<Owner>> slots;
  auto slot = [&](uint64_t seq) {
    slots.push_back(std::make_unique<Owner>());
    slots.back()->seq = seq;
    slots.back()->id = taskring::PTO2TaskId::make(0, static_cast<uint32_t>(seq));
    return slots.back().get();
  };
  taskring::deps::TensorMap map;
  for (uint32_t r = 0; r < live; ++r) map.insert(row_of(buf, r), slot(r + 1), true);
  const ChipTensor probe = row_of(buf, live);
  Owner* writer = slot(live + 1);
  uint64_t deps = 0;
  auto submit = [&] {
    map.for_each_dependency(probe, true, [&](Owner*) { ++deps; });
    map.insert(probe, writer, true);
  };
  for (int i = 0; i < 64; ++i) submit();  // warm
  std::vector<double> batches;
  for (int b = 0; b < 7; ++b) {
    const double t0 = taskring::bench::thread_cpu_s();
    for (int i = 0; i < ops; ++i) submit();
    batches.push_back((taskring::bench::thread_cpu_s() - t0) / ops * 1e9);
  }
  std::sort(batches.begin(), batches.end());
  if (map.live_entries_hint() != live + 1)
    std::fprintf(stderr, "unexpected live entries %llu\n", (unsigned long long)map.live_entries_hint());
  return {live, batches[batches.size() / 2]};
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  int ops = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--json"))
      json_path = argv[i + 1];
    else if (!std::strcmp(argv[i], "--ops"))
      ops = std::max(1, std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: bench_tensor_map [--json FILE] [--ops N]\n");
      return 2;
    }
  }
  const std::string load_before = loadavg();
  std::vector<Result> rs;
  for (uint32_t live : {1u, 10u, 100u, 1000u, 10000u}) rs.push_back(measure(live, live >= 1000 ? ops / 10 + 1 : ops));
  const std::string load_after = loadavg();
  std::printf("TensorMap, one writer submit (probe + insert) with L live disjoint views of one buffer\n");
  std::printf("thread CPU time, median of 7 batches; loadavg %s -> %s\n\n", load_before.c_str(), load_after.c_str());
  std::printf("%8s %14s %10s\n", "L", "ns/submit", "vs L=1");
  nlohmann::json j = {
      {"loadavg_before", load_before}, {"loadavg_after", load_after}, {"rows", nlohmann::json::array()}};
  for (const Result& r : rs) {
    const double ratio = r.ns_per_submit / rs.front().ns_per_submit;
    std::printf("%8u %14.1f %10.2f\n", r.live, r.ns_per_submit, ratio);
    j["rows"].push_back({{"live_views", r.live}, {"ns_per_submit", r.ns_per_submit}, {"ratio_vs_one", ratio}});
  }
  if (!json_path.empty()) std::ofstream(json_path) << j.dump(2) << "\n";
  return 0;
}
