#include "child_process.hpp"

#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace taskring::node {

std::string describe_wait_status(int st) {
  if (WIFSIGNALED(st)) {
    int sig = WTERMSIG(st);
    const char* abbrev = sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) + " (SIG" + (abbrev ? abbrev : "?") + ")";
  }
  if (WIFEXITED(st)) return "exited with status " + std::to_string(WEXITSTATUS(st));
  return "ended (wait status " + std::to_string(st) + ")";
}

ChildProcess::ChildProcess(pid_t pid, std::string label)
    : pid_(pid), name_(std::move(label) + " (pid " + std::to_string(pid) + ")") {
  pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
}

ChildProcess::~ChildProcess() {
  if (pidfd_ >= 0) ::close(pidfd_);
}

bool ChildProcess::reap_locked(bool block) {
  if (reaped_) return true;
  int st = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &st, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    reaped_ = true;
    wait_status_ = st;
  } else if (r < 0 && errno == ECHILD) {
    // Reaped elsewhere (a SIGCHLD handler of the embedding program): the
    // child is gone either way and must not be signalled again.
    reaped_ = true;
    wait_status_ = 0;
  }
  return reaped_;
}

Status ChildProcess::check() {
  std::lock_guard<std::mutex> lk(mu_);
  if (!reap_locked(false)) return Status::Ok();
  return unavailable(name_ + " " + describe_wait_status(wait_status_));
}

bool ChildProcess::reaped() {
  std::lock_guard<std::mutex> lk(mu_);
  return reaped_;
}

bool ChildProcess::wait_exit(Deadline deadline) {
  while (true) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (reap_locked(false)) return true;
    }
    uint64_t left = deadline.remaining_ns();
    if (left == 0) return false;
    int ms = static_cast<int>(std::min<uint64_t>((left + 999999) / 1000000, 100));
    if (pidfd_ >= 0) {
      pollfd p{pidfd_, POLLIN, 0};
      poll(&p, 1, ms);
    } else {
      // No pidfd (old kernel): a bounded 1 ms re-check on this cold path.
      timespec ts{0, 1000000};
      nanosleep(&ts, nullptr);
    }
  }
}

void ChildProcess::signal_group(int sig) {
  std::lock_guard<std::mutex> lk(mu_);
  if (reaped_) return;
  killpg(pid_, sig);
  kill(pid_, sig);
}

bool ChildProcess::terminate(Deadline graceful, Deadline term, Deadline kill_deadline) {
  if (wait_exit(graceful)) return true;
  signal_group(SIGTERM);
  if (wait_exit(term)) return true;
  signal_group(SIGKILL);
  return wait_exit(kill_deadline);
}

}  // namespace taskring::node
