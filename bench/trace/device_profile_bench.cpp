// Cost of the per-task device profile on the shared kernel launch path:
// ns per launch_block of a one-kernel task with the profile off and on.
//   device_profile_bench [--calls N] [--runs N]
// Off must cost nothing measurable (one branch); on, the goal is <= 50 ns per
// task. Reported as the median of runs of process CPU time, with the load.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "exec/device_profile.hpp"
#include "exec/kernel_launch.hpp"
#include "taskring/device/sim_device.hpp"

namespace {

void empty_kernel(int64_t*) {}

double cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  long calls = 2'000'000;
  int runs = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--calls")
      calls = std::atol(argv[i + 1]);
    else if (a == "--runs")
      runs = std::atoi(argv[i + 1]);
  }
  auto cfg = taskring::SimDeviceConfig::from_env(taskring::process_env());
  if (!cfg.ok()) return 1;
  auto device = taskring::create_sim_device(*cfg);
  if (!device.ok()) return 1;
  std::vector<taskring_kernel_fn> kernels(TASKRING_MAX_FUNC_ID, nullptr);
  kernels[1] = &empty_kernel;
  const int32_t slots[3] = {1, -1, -1};
  taskring::exec::LaunchTask task{nullptr, 0, nullptr, 0, slots, 1, 7};
  std::atomic<uint64_t> counter{0};
  taskring::exec::DeviceProfile profile(1);
  auto measure = [&](taskring::exec::DeviceProfile* p) {
    taskring::exec::LaunchPlace place{0, 1, (*device)->topology(), p};
    taskring::exec::LaunchFailure f;
    profile.clear();
    double t0 = cpu_s();
    for (long i = 0; i < calls; ++i)
      taskring::exec::launch_block(task, 0, place, **device, kernels.data(), counter, &f);
    return (cpu_s() - t0) * 1e9 / static_cast<double>(calls);
  };
  std::vector<double> off, on;
  for (int r = 0; r < runs; ++r) {
    off.push_back(measure(nullptr));
    on.push_back(measure(&profile));
  }
  std::string load;
  std::getline(std::ifstream("/proc/loadavg"), load);
  const double a = median(off), b = median(on);
  std::printf("launch_block, 1 kernel, %ld calls x %d runs (median, CPU time)\n", calls, runs);
  std::printf("  profile off: %7.1f ns/task\n  profile on : %7.1f ns/task\n  cost of on : %7.1f ns/task (goal <= 50)\n",
              a, b, b - a);
  std::printf("  records kept in the last run: %zu; loadavg %s\n", profile.size(), load.c_str());
  return 0;
}
