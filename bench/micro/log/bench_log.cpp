// bench_log: ns per record for the taskring logger and STRACE emitter versus
// the multi-call stdio form they replace (fprintf prefix, vfprintf body,
// fputc('\n'), fflush), into /dev/null and into a pipe drained by a reader
// thread, measured side by side in one run (alternating, median of reps).
//
//   bench_log [--records N] [--reps R] [--json out.json]
//
// The stdio form runs on an unbuffered FILE* (how stderr is opened, so each
// call is its own write(2): the upstream form of the seed bug) and, as a
// second reference, on a fully buffered FILE* flushed per record (one
// write(2), still not atomic beyond BUFSIZ). Ratios are ours / stdio.
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "taskring/base/clock.hpp"
#include "taskring/log/logger.hpp"
#include "taskring/log/percent_encode.hpp"
#include "taskring/log/strace.hpp"

namespace {

using namespace taskring;
namespace tl = taskring::log;
namespace ts = taskring::log::strace;

// ---- the stdio forms ------------------------------------------------------

void stdio_log(FILE* f, const char* func, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));
void stdio_log(FILE* f, const char* func, const char* file, int line, const char* fmt, ...) {
  std::fprintf(f, "[mono_ns=%llu][T0x%lx][%s] %s: [%s:%d] ", static_cast<unsigned long long>(mono_ns()),
               static_cast<unsigned long>(pthread_self()), "TIMING", func, file, line);
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(f, fmt, ap);
  va_end(ap);
  std::fputc('\n', f);
  std::fflush(f);
}

void stdio_vlog(FILE* f, const char* func, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
void stdio_vlog(FILE* f, const char* func, const char* fmt, ...) {
  std::fprintf(f, "[mono_ns=%llu][T0x%lx][%s] %s: ", static_cast<unsigned long long>(mono_ns()),
               static_cast<unsigned long>(pthread_self()), "TIMING", func);
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(f, fmt, ap);
  va_end(ap);
  std::fputc('\n', f);
  std::fflush(f);
}

const int g_pid = static_cast<int>(getpid());
const long g_tid = static_cast<long>(syscall(SYS_gettid));

// The same span through the stdio form: fields encoded into strings, then the
// multi-call emission (pid/tid cached as ours are, so only the form differs).
void stdio_span(FILE* f, int64_t ts_ns, int64_t dur, uint64_t inv, uint64_t hid, int depth, int round) {
  std::string name = tl::encode_name("chip.run.runner_run.device_wall.sched", ts::kNameCapacity);
  std::string attrs = "clk=dev round=" + std::to_string(round) + " kernel=" + tl::encode_name("paged_attn", 64);
  stdio_vlog(f, "emit_host_span", "[STRACE] v=1 pid=%d tid=%ld inv=%llu hid=%llx depth=%d name=%s ts=%lld dur=%lld %s",
             g_pid, g_tid, static_cast<unsigned long long>(inv), static_cast<unsigned long long>(hid), depth,
             name.c_str(), static_cast<long long>(ts_ns), static_cast<long long>(dur), attrs.c_str());
}

void ours_span(int64_t ts_ns, int64_t dur, uint64_t inv, uint64_t hid, int depth, int round) {
  ts::emit_span("chip.run.runner_run.device_wall.sched", ts_ns, dur, inv, hid, depth,
                ts::Attrs{{"clk", "dev"}, {"round", round}, {"kernel", "paged_attn"}});
}

// ---- measurement ------------------------------------------------------------

double ns_per_record(int records, const std::function<void(int)>& body) {
  uint64_t t0 = mono_ns();
  for (int i = 0; i < records; ++i) body(i);
  return static_cast<double>(mono_ns() - t0) / records;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Result {
  std::string record, sink, form;
  double median_ns, min_ns, max_ns;
};

// Drains a pipe until EOF, like a harness capturing stderr.
class PipeSink {
 public:
  PipeSink() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) std::perror("pipe2");
    rd_ = fds[0];
    wr_ = fds[1];
    reader_ = std::thread([this] {
      static char buf[1 << 16];
      while (::read(rd_, buf, sizeof(buf)) > 0) {
      }
    });
  }
  ~PipeSink() {
    ::close(wr_);
    reader_.join();
    ::close(rd_);
  }
  int fd() const { return wr_; }

 private:
  int rd_ = -1, wr_ = -1;
  std::thread reader_;
};

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

}  // namespace

int main(int argc, char** argv) {
  int records = 20000, reps = 15;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--records" && i + 1 < argc) {
      records = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--records N] [--reps R] [--json out.json]\n", argv[0]);
      return 2;
    }
  }
  tl::set_threshold(tl::Level::kTiming);

  int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  PipeSink pipe_sink;
  struct Sink {
    const char* name;
    int fd;
  } sinks[] = {{"/dev/null", devnull}, {"pipe", pipe_sink.fd()}};

  std::vector<Result> results;
  std::map<std::string, double> med;  // "record|sink|form" -> median
  for (const Sink& sink : sinks) {
    FILE* unbuf = ::fdopen(::dup(sink.fd), "w");
    std::setvbuf(unbuf, nullptr, _IONBF, 0);
    FILE* buffered = ::fdopen(::dup(sink.fd), "w");
    std::setvbuf(buffered, nullptr, _IOFBF, 1 << 16);
    tl::set_output_fd(sink.fd);
    TR_LOG_TIMING("warm-up (emits the clock anchor)");

    const char* kFile = tl::detail::basename_of(__FILE__);
    std::vector<std::pair<std::string, std::function<void(int)>>> log_forms = {
        {"taskring",
         [](int i) { TR_LOG_TIMING("round=%d kernel=%s elapsed_ns=%llu", i, "paged_attn", 123456789ull + i); }},
        {"stdio_unbuffered",
         [unbuf, kFile](int i) {
           stdio_log(unbuf, "operator()", kFile, __LINE__, "round=%d kernel=%s elapsed_ns=%llu", i, "paged_attn",
                     123456789ull + i);
         }},
        {"stdio_buffered_fflush",
         [buffered, kFile](int i) {
           stdio_log(buffered, "operator()", kFile, __LINE__, "round=%d kernel=%s elapsed_ns=%llu", i, "paged_attn",
                     123456789ull + i);
         }},
    };
    std::vector<std::pair<std::string, std::function<void(int)>>> span_forms = {
        {"taskring", [](int i) { ours_span(1000000 + i, 9000, static_cast<uint64_t>(i) + 1, 0xfeedbeefcafe, 3, i); }},
        {"stdio_unbuffered",
         [unbuf](int i) { stdio_span(unbuf, 1000000 + i, 9000, static_cast<uint64_t>(i) + 1, 0xfeedbeefcafe, 3, i); }},
        {"stdio_buffered_fflush",
         [buffered](int i) {
           stdio_span(buffered, 1000000 + i, 9000, static_cast<uint64_t>(i) + 1, 0xfeedbeefcafe, 3, i);
         }},
    };
    for (auto* forms : {&log_forms, &span_forms}) {
      const char* record = forms == &log_forms ? "log" : "strace";
      std::vector<std::vector<double>> samples(forms->size());
      for (auto& [name, body] : *forms) ns_per_record(records / 10, body);  // warm
      for (int r = 0; r < reps; ++r) {
        for (size_t f = 0; f < forms->size(); ++f) samples[f].push_back(ns_per_record(records, (*forms)[f].second));
      }
      for (size_t f = 0; f < forms->size(); ++f) {
        auto& s = samples[f];
        Result res{record,
                   sink.name,
                   (*forms)[f].first,
                   median(s),
                   *std::min_element(s.begin(), s.end()),
                   *std::max_element(s.begin(), s.end())};
        med[res.record + "|" + res.sink + "|" + res.form] = res.median_ns;
        results.push_back(res);
      }
    }
    std::fclose(unbuf);
    std::fclose(buffered);
  }

  // Disabled-path cost: a filtered record and an inactive span.
  tl::set_threshold(tl::Level::kWarn);
  double disabled_log = median({ns_per_record(records * 10, [](int i) { TR_LOG_INFO("i=%d", i); }),
                                ns_per_record(records * 10, [](int i) { TR_LOG_INFO("i=%d", i); }),
                                ns_per_record(records * 10, [](int i) { TR_LOG_INFO("i=%d", i); })});
  double disabled_span = median({ns_per_record(records * 10,
                                               [](int i) {
                                                 ts::StraceSpan s("x");
                                                 s.attr("i", i);
                                               }),
                                 ns_per_record(records * 10,
                                               [](int i) {
                                                 ts::StraceSpan s("x");
                                                 s.attr("i", i);
                                               }),
                                 ns_per_record(records * 10, [](int i) {
                                   ts::StraceSpan s("x");
                                   s.attr("i", i);
                                 })});
  tl::set_output_fd(2);
  ::close(devnull);

  utsname u{};
  ::uname(&u);
  nlohmann::json j;
  j["machine"] = {{"cpu", cpu_model()},
                  {"hardware_threads", std::thread::hardware_concurrency()},
                  {"kernel", std::string(u.sysname) + " " + u.release}};
  j["records_per_rep"] = records;
  j["reps"] = reps;
  std::printf("bench_log: %d records x %d reps per cell, median ns/record (min..max); cpu: %s, %u hw threads\n",
              records, reps, cpu_model().c_str(), std::thread::hardware_concurrency());
  std::printf("%-7s %-10s %-22s %10s %20s %12s\n", "record", "sink", "form", "median_ns", "min..max", "ours/form");
  for (const Result& r : results) {
    double ours = med[r.record + "|" + r.sink + "|taskring"];
    double ratio = ours / r.median_ns;
    char range[64];
    std::snprintf(range, sizeof(range), "%.0f..%.0f", r.min_ns, r.max_ns);
    std::printf("%-7s %-10s %-22s %10.1f %20s %12.3f\n", r.record.c_str(), r.sink.c_str(), r.form.c_str(), r.median_ns,
                range, ratio);
    j["results"].push_back({{"record", r.record},
                            {"sink", r.sink},
                            {"form", r.form},
                            {"median_ns", r.median_ns},
                            {"min_ns", r.min_ns},
                            {"max_ns", r.max_ns},
                            {"taskring_over_form", ratio}});
  }
  std::printf("disabled: filtered TR_LOG_INFO %.2f ns, inactive StraceSpan %.2f ns\n", disabled_log, disabled_span);
  j["disabled_ns"] = {{"filtered_log", disabled_log}, {"inactive_span", disabled_span}};
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << j.dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "bench_log: cannot write %s\n", json_path.c_str());
      return 1;
    }
    std::printf("json: %s\n", json_path.c_str());
  }
  return 0;
}
