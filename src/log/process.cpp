#include "process.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace taskring::log::detail {
namespace {

// 0 = not yet read. Process-global because it caches a process property;
// the atfork child handler keeps it true across fork.
std::atomic<int> g_pid{0};

void refresh_pid_in_child() { g_pid.store(static_cast<int>(::getpid()), std::memory_order_relaxed); }

int read_pid_slow() {
  // Registered before the cache is filled, so no fork can leave a stale pid.
  static const bool registered = (pthread_atfork(nullptr, nullptr, refresh_pid_in_child), true);
  (void)registered;
  int pid = static_cast<int>(::getpid());
  g_pid.store(pid, std::memory_order_relaxed);
  return pid;
}

struct TidCache {
  int pid = 0;
  int tid = 0;
};
thread_local TidCache t_tid;

}  // namespace

int current_pid() {
  int pid = g_pid.load(std::memory_order_relaxed);
  return pid != 0 ? pid : read_pid_slow();
}

int current_tid() {
  int pid = current_pid();
  if (t_tid.pid != pid) {
    t_tid.tid = static_cast<int>(::syscall(SYS_gettid));
    t_tid.pid = pid;
  }
  return t_tid.tid;
}

}  // namespace taskring::log::detail
