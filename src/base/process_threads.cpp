#include "taskring/base/process_threads.hpp"

#include <dirent.h>
#include <sched.h>
#include <time.h>

#include <fstream>

#include "taskring/base/status.hpp"

namespace taskring {
namespace {

Expected<ProcessThreads> list_once() {
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return unavailable("process_threads: cannot open /proc/self/task");
  ProcessThreads t;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    ++t.count;
    std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string c;
    std::getline(comm, c);
    t.names += (t.names.empty() ? "" : ", ") + c + " (tid " + e->d_name + ")";
  }
  closedir(d);
  return t;
}

}  // namespace

Expected<ProcessThreads> process_threads(int expected, Deadline settle) {
  // The kernel has no event for "a non-leader thread left the list", so this
  // re-reads. It is the one place that polls on purpose: the state lasts
  // microseconds unless the exiting thread is preempted, a caller checks it
  // once (before forking), and a process with a thread that really runs pays
  // `settle` on its way to an error.
  for (int attempt = 0;; ++attempt) {
    Expected<ProcessThreads> t = list_once();
    if (!t.ok() || t->count <= expected || settle.expired()) return t;
    if (attempt < 16) {
      sched_yield();  // the exiting thread may be waiting for this very CPU
    } else {
      const timespec pause{0, 100'000};
      nanosleep(&pause, nullptr);
    }
  }
}

}  // namespace taskring
