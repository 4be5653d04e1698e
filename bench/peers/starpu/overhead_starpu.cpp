// Per-task overhead of StarPU 1.3: starpu_task_insert with STARPU_R / STARPU_RW
// / STARPU_W on registered variable handles, a CPU codelet with an empty body.
// Timed: first insert to the return of starpu_task_wait_for_all. Handles are
// registered in prepare and unregistered in teardown, both untimed.
//
// Defaults, each overridable from the environment (setenv never overwrites):
//   STARPU_SILENT=1  STARPU_CALIBRATE=0  STARPU_SCHED=lws  STARPU_NCPU=<threads>
//   STARPU_NCUDA=0   STARPU_NOPENCL=0
#include <starpu.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "common/counter.hpp"
#include "common/harness.hpp"
#include "taskring/base/clock.hpp"

namespace {

using peers::Pattern;

void empty_cpu(void* /*buffers*/[], void* /*cl_arg*/) { peers::task_body(); }

starpu_codelet make_codelet(std::initializer_list<starpu_data_access_mode> modes) {
  starpu_codelet cl;
  starpu_codelet_init(&cl);
  cl.where = STARPU_CPU;
  cl.cpu_funcs[0] = empty_cpu;
  cl.nbuffers = static_cast<int>(modes.size());
  int i = 0;
  for (auto m : modes) cl.modes[i++] = m;
  cl.name = "empty";
  return cl;
}

starpu_codelet g_rw, g_w, g_r, g_r_rw;

struct Handles {
  std::vector<int64_t> data;
  std::vector<starpu_data_handle_t> h;
  explicit Handles(std::size_t n) : data(n), h(n) {
    for (std::size_t i = 0; i < n; ++i)
      starpu_variable_data_register(&h[i], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&data[i]), sizeof(int64_t));
  }
  ~Handles() {
    for (auto handle : h) starpu_data_unregister(handle);
  }
};

void check(int rc, const char* what) {
  if (rc != 0) {
    std::fprintf(stderr, "starpu: %s failed: %d\n", what, rc);
    std::exit(3);
  }
}

uint64_t run(Pattern p, std::size_t n, Handles& hs) {
  auto& h = hs.h;
  uint64_t t0 = taskring::mono_ns();
  switch (p) {
    case Pattern::chain:
      for (std::size_t i = 0; i < n; ++i) check(starpu_task_insert(&g_rw, STARPU_RW, h[0], 0), "task_insert");
      break;
    case Pattern::independent:
      for (std::size_t i = 0; i < n; ++i) check(starpu_task_insert(&g_w, STARPU_W, h[i], 0), "task_insert");
      break;
    case Pattern::mix8:
      for (std::size_t i = 0; i < n; ++i)
        check(starpu_task_insert(&g_r_rw, STARPU_R, h[i % 8], STARPU_RW, h[(i + 1) % 8], 0), "task_insert");
      break;
    case Pattern::fanout:
      check(starpu_task_insert(&g_w, STARPU_W, h[0], 0), "task_insert");
      for (std::size_t i = 1; i < n; ++i) check(starpu_task_insert(&g_r, STARPU_R, h[0], 0), "task_insert");
      break;
  }
  check(starpu_task_wait_for_all(), "task_wait_for_all");
  return taskring::mono_ns() - t0;
}

peers::Rep prepare(Pattern p, std::size_t n) {
  auto hs = std::make_shared<Handles>(p == Pattern::independent ? n : 8);
  return {[=] { return run(p, n, *hs); },
          {{"handles", hs->h.size()}, {"interface", "variable"}},
          [hs]() mutable { hs.reset(); }};
}

std::string env_or(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

int main(int argc, char** argv) {
  peers::Options opts = peers::parse_options(argc, argv, "StarPU task_insert per-task overhead", {"starpu"});
  setenv("STARPU_SILENT", "1", 0);
  setenv("STARPU_CALIBRATE", "0", 0);
  setenv("STARPU_SCHED", "lws", 0);
  setenv("STARPU_NCPU", std::to_string(opts.threads).c_str(), 0);
  setenv("STARPU_NCUDA", "0", 0);
  setenv("STARPU_NOPENCL", "0", 0);
  check(starpu_init(nullptr), "starpu_init");
  g_rw = make_codelet({STARPU_RW});
  g_w = make_codelet({STARPU_W});
  g_r = make_codelet({STARPU_R});
  g_r_rw = make_codelet({STARPU_R, STARPU_RW});

  int major = 0, minor = 0, release = 0;
  starpu_get_version(&major, &minor, &release);
  peers::RuntimeInfo info;
  info.runtime = "starpu";
  info.version = "StarPU " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
  info.config = {{"STARPU_SCHED", env_or("STARPU_SCHED")},
                 {"STARPU_NCPU", env_or("STARPU_NCPU")},
                 {"STARPU_CALIBRATE", env_or("STARPU_CALIBRATE")},
                 {"cpu_workers", starpu_cpu_worker_get_count()},
                 {"submitter", "main thread (not a worker)"}};
  int bad = peers::run_patterns(opts, info, prepare);
  starpu_shutdown();
  return bad ? 1 : 0;
}
