// Per-task overhead of OpenMP tasks with depend clauses. One source, built
// twice: with g++ (libgomp) -> bench_overhead_omp_gcc and with clang++
// (libomp) -> bench_overhead_omp_clang. The master thread of a parallel region
// creates all tasks inside `single`; the others execute them. Timed: first
// task creation to the end of `taskwait`.
#include <omp.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/counter.hpp"
#include "common/harness.hpp"
#include "taskring/base/clock.hpp"

namespace {

using peers::Pattern;

// Dependency objects; tasks never touch them, only their addresses matter.
struct Slots {
  std::vector<int> v;
  explicit Slots(std::size_t n) : v(n) {}
  int* p() { return v.data(); }
};

uint64_t run_chain(std::size_t n, int* s) {
  uint64_t t0 = 0, t1 = 0;
  (void)s;  // used only in depend clauses; g++ 12 warns otherwise
#pragma omp parallel
#pragma omp single
  {
    t0 = taskring::mono_ns();
    for (std::size_t i = 0; i < n; ++i) {
#pragma omp task depend(inout : s[0])
      peers::task_body();
    }
#pragma omp taskwait
    t1 = taskring::mono_ns();
  }
  return t1 - t0;
}

uint64_t run_independent(std::size_t n, int* s) {
  uint64_t t0 = 0, t1 = 0;
  (void)s;  // used only in depend clauses; g++ 12 warns otherwise
#pragma omp parallel
#pragma omp single
  {
    t0 = taskring::mono_ns();
    for (std::size_t i = 0; i < n; ++i) {
#pragma omp task depend(out : s[i])
      peers::task_body();
    }
#pragma omp taskwait
    t1 = taskring::mono_ns();
  }
  return t1 - t0;
}

uint64_t run_mix8(std::size_t n, int* s) {
  uint64_t t0 = 0, t1 = 0;
  (void)s;  // used only in depend clauses; g++ 12 warns otherwise
#pragma omp parallel
#pragma omp single
  {
    t0 = taskring::mono_ns();
    for (std::size_t i = 0; i < n; ++i) {
#pragma omp task depend(in : s[i % 8]) depend(inout : s[(i + 1) % 8])
      peers::task_body();
    }
#pragma omp taskwait
    t1 = taskring::mono_ns();
  }
  return t1 - t0;
}

uint64_t run_fanout(std::size_t n, int* s) {
  uint64_t t0 = 0, t1 = 0;
  (void)s;  // used only in depend clauses; g++ 12 warns otherwise
#pragma omp parallel
#pragma omp single
  {
    t0 = taskring::mono_ns();
#pragma omp task depend(out : s[0])
    peers::task_body();
    for (std::size_t i = 1; i < n; ++i) {
#pragma omp task depend(in : s[0])
      peers::task_body();
    }
#pragma omp taskwait
    t1 = taskring::mono_ns();
  }
  return t1 - t0;
}

peers::Rep prepare(Pattern p, std::size_t n) {
  auto slots = std::make_shared<Slots>(p == Pattern::independent ? n : 8);
  uint64_t (*fn)(std::size_t, int*) = nullptr;
  switch (p) {
    case Pattern::chain: fn = run_chain; break;
    case Pattern::independent: fn = run_independent; break;
    case Pattern::mix8: fn = run_mix8; break;
    case Pattern::fanout: fn = run_fanout; break;
  }
  return {[=] { return fn(n, slots->p()); }, {}, {}};
}

}  // namespace

int main(int argc, char** argv) {
  peers::Options opts = peers::parse_options(argc, argv, "OpenMP task depend per-task overhead", {"omp-clang", "omp-gcc"});
  omp_set_num_threads(opts.threads);
  peers::RuntimeInfo info;
#if defined(__clang__)
  info.runtime = "omp-clang";
  info.version = "libomp, clang " __clang_version__ ", _OPENMP " + std::to_string(_OPENMP);
#else
  info.runtime = "omp-gcc";
  info.version = "libgomp, gcc " __VERSION__ ", _OPENMP " + std::to_string(_OPENMP);
#endif
  info.config = {{"num_threads", omp_get_max_threads()}, {"creator", "master thread in single"}};
  return peers::run_patterns(opts, info, prepare) ? 1 : 0;
}
