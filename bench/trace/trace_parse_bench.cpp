// Parse throughput of `taskring trace` on a generated multi-rank log.
//   trace_parse_bench [--mb 100] [--runs 5] [--json out.json]
// The log mixes 16 ranks' interleaved [STRACE] records (some two to a line,
// as when forked writers share one stderr), clock anchors and ordinary log
// lines. Prints a table and writes the JSON copy with the machine it ran on.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "taskring/trace/invocations.hpp"
#include "taskring/trace/matrix.hpp"
#include "taskring/trace/parser.hpp"

namespace {

std::string generate(size_t target_bytes) {
  std::string out;
  out.reserve(target_bytes + 4096);
  std::mt19937_64 rng(42);
  constexpr int kRanks = 16;
  const char* names[] = {"chip.run.bind",
                         "chip.run.bind.args",
                         "chip.run.runner_run.device_wall.orch",
                         "chip.run.runner_run.device_wall.sched",
                         "chip.run.runner_run.device_wall",
                         "chip.run.runner_run",
                         "chip.run.validate",
                         "chip.run"};
  const int depth[] = {1, 2, 3, 3, 2, 1, 1, 0};
  char buf[512];
  for (int r = 0; r < kRanks; ++r) {
    out += "[mono_ns=1000][T0x7f12a4c0b740][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=" + std::to_string(4000 + r) +
           " mono_ns=1000 wall_ns=1755000000000000000\n";
  }
  uint64_t inv[kRanks] = {};
  int64_t mono = 1'000'000'000;
  while (out.size() < target_bytes) {
    int r = static_cast<int>(rng() % kRanks);
    ++inv[r];
    for (int k = 0; k < 8; ++k) {
      mono += 1000 + static_cast<int64_t>(rng() % 5000);
      const char* attrs = k == 1 ? " ntensor=12" : (k >= 2 && k <= 4) ? " clk=dev" : "";
      int n = std::snprintf(
          buf, sizeof buf,
          "[mono_ns=%lld][T0x7f12a4c0b7%02x][TIMING] emit_host_span: [STRACE] v=1 pid=%d tid=%d "
          "inv=%llu hid=9f3a6c21d4e8b705 depth=%d name=%s ts=%lld dur=%lld%s",
          static_cast<long long>(mono), r, 4000 + r, 4100 + r, static_cast<unsigned long long>(inv[r]), depth[k],
          names[k], static_cast<long long>(mono - 400000), static_cast<long long>(400000 + rng() % 1000), attrs);
      out.append(buf, static_cast<size_t>(n));
      // One record in 16 shares its line with the next (interleaved writers).
      if (rng() % 16 != 0) out.push_back('\n');
      if (rng() % 3 == 0) {
        n = std::snprintf(buf, sizeof buf,
                          "[mono_ns=%lld][T0x7f12a4c0b7%02x][INFO] Worker::dispatch: [worker.cpp:%d] task %llu "
                          "ready on core %d [ring 0] (deps=3)\n",
                          static_cast<long long>(mono), r, 100 + k, static_cast<unsigned long long>(rng() % 100000),
                          static_cast<int>(rng() % 24));
        out.append(buf, static_cast<size_t>(n));
      }
    }
  }
  out.push_back('\n');
  return out;
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

// Process CPU seconds: on a shared, loaded build machine wall time mostly
// measures other processes; the parse is single-threaded, so CPU time is its cost.
double cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  size_t mb = 100;
  int runs = 5;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--mb" && i + 1 < argc)
      mb = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--runs" && i + 1 < argc)
      runs = std::atoi(argv[++i]);
    else if (a == "--json" && i + 1 < argc)
      json_path = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--mb N] [--runs N] [--json FILE]\n", argv[0]);
      return 2;
    }
  }
  if (runs < 1 || mb < 1) {
    std::fprintf(stderr, "--mb and --runs must be >= 1\n");
    return 2;
  }
  const std::string log = generate(mb * 1000 * 1000);
  std::vector<double> parse_s, analyse_s, parse_cpu_s;
  uint64_t records = 0, torn = 0;
  for (int i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    double c0 = cpu_s();
    taskring::trace::Trace t = taskring::trace::parse_trace(log, "bench");
    parse_cpu_s.push_back(cpu_s() - c0);
    auto t1 = std::chrono::steady_clock::now();
    taskring::trace::StageNames names;
    auto invs = taskring::trace::group_invocations(t, names);
    auto m = taskring::trace::build_matrix(t, invs, names, {});
    auto t2 = std::chrono::steady_clock::now();
    if (!m.ok()) return 1;
    parse_s.push_back(std::chrono::duration<double>(t1 - t0).count());
    analyse_s.push_back(std::chrono::duration<double>(t2 - t1).count());
    records = t.counts.parsed;
    torn = t.counts.torn;
  }
  // The same bytes streamed from a file (what `taskring trace FILE` does), and
  // glued onto one line (every '\n' a space): parsing must stay linear.
  std::vector<double> file_s, line_s;
  uint64_t line_records = 0;
  {
    char path[] = "/tmp/trace_parse_bench-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 1;
    close(fd);
    std::ofstream(path, std::ios::binary) << log;
    for (int i = 0; i < runs; ++i) {
      double c0 = cpu_s();
      auto t = taskring::trace::parse_files({path});
      file_s.push_back(cpu_s() - c0);
      if (!t.ok() || t->counts.parsed != records) return 1;
    }
    std::remove(path);
    std::string one_line = log;
    std::replace(one_line.begin(), one_line.end(), '\n', ' ');
    for (int i = 0; i < runs; ++i) {
      double c0 = cpu_s();
      taskring::trace::Trace t = taskring::trace::parse_trace(one_line, "bench");
      line_s.push_back(cpu_s() - c0);
      line_records = t.counts.parsed;
    }
  }
  const double mbytes = static_cast<double>(log.size()) / 1e6;
  const double p = median(parse_s), a = median(analyse_s), pc = median(parse_cpu_s);
  const double fc = median(file_s), lc = median(line_s);
  std::printf("%-28s %12s\n", "metric", "value");
  std::printf("%-28s %12.1f\n", "log size (MB)", mbytes);
  std::printf("%-28s %12llu\n", "records parsed", static_cast<unsigned long long>(records));
  std::printf("%-28s %12llu\n", "torn", static_cast<unsigned long long>(torn));
  std::printf("%-28s %12.1f\n", "parse median (ms)", p * 1e3);
  std::printf("%-28s %12.1f\n", "parse throughput (MB/s)", mbytes / p);
  std::printf("%-28s %12.1f\n", "parse CPU throughput (MB/s)", mbytes / pc);
  std::printf("%-28s %12.1f\n", "file streamed CPU (MB/s)", mbytes / fc);
  std::printf("%-28s %12.1f\n", "one line CPU (MB/s)", mbytes / lc);
  std::printf("%-28s %12llu\n", "one line records", static_cast<unsigned long long>(line_records));
  std::printf("%-28s %12.1f\n", "parse ns / record", p * 1e9 / static_cast<double>(records));
  std::printf("%-28s %12.1f\n", "group+matrix median (ms)", a * 1e3);
  std::printf("%-28s %12.1f\n", "end-to-end (MB/s)", mbytes / (p + a));
  std::printf("(median of %d runs; goal: parse >= 200 MB/s)\n", runs);
  nlohmann::json j = {
      {"bench", "trace_parse"},
      {"log_bytes", log.size()},
      {"records", records},
      {"torn", torn},
      {"runs", runs},
      {"parse_s", parse_s},
      {"analyse_s", analyse_s},
      {"parse_median_s", p},
      {"parse_mb_per_s", mbytes / p},
      {"parse_cpu_s", parse_cpu_s},
      {"parse_cpu_mb_per_s", mbytes / pc},
      {"file_streamed_cpu_mb_per_s", mbytes / fc},
      {"one_line_cpu_mb_per_s", mbytes / lc},
      {"one_line_records", line_records},
      {"parse_ns_per_record", p * 1e9 / static_cast<double>(records)},
      {"end_to_end_mb_per_s", mbytes / (p + a)},
      {"goal_parse_mb_per_s", 200},
      {"machine",
       {{"cpu", cpu_model()}, {"hardware_threads", std::thread::hardware_concurrency()}, {"loadavg", [] {
                                                                                            std::ifstream f(
                                                                                                "/proc/loadavg");
                                                                                            std::string l;
                                                                                            std::getline(f, l);
                                                                                            return l;
                                                                                          }()}}}};
  if (!json_path.empty()) {
    std::ofstream(json_path) << j.dump(2) << "\n";
  } else {
    std::printf("%s\n", j.dump().c_str());
  }
  return 0;
}
