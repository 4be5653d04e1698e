#include "child_process.hpp"

#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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
  if (!kill_reason_.empty()) return unavailable(name_ + " " + kill_reason_);
  return unavailable(name_ + " " + describe_wait_status(wait_status_));
}

namespace {

// The state letter of /proc/<pid>/stat ('R', 'S', 'T', ...); 0 if unknown.
char proc_state(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = std::fopen(path, "re");
  if (f == nullptr) return 0;
  char buf[512];
  const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  buf[n] = 0;
  // "pid (comm) S ...": comm may hold spaces and parentheses; the state
  // follows the last ')'.
  const char* close = std::strrchr(buf, ')');
  return close != nullptr && close[1] == ' ' ? close[2] : 0;
}

}  // namespace

bool ChildProcess::kill_if_stopped_for(uint64_t limit_ns, uint64_t now_ns, const std::string& knob) {
  std::lock_guard<std::mutex> lk(mu_);
  if (reaped_ || !kill_reason_.empty()) return false;
  const char st = proc_state(pid_);
  if (st != 'T' && st != 't') {
    stopped_since_ns_ = 0;
    return false;
  }
  if (stopped_since_ns_ == 0) {
    stopped_since_ns_ = now_ns;
    return false;
  }
  if (now_ns - stopped_since_ns_ < limit_ns) return false;
  kill_reason_ = "was stopped (state " + std::string(1, st) + ": SIGSTOP, SIGTSTP or a debugger) for " +
                 std::to_string((now_ns - stopped_since_ns_) / 1'000'000) + " ms, past " + knob + "; killed it";
  ::kill(pid_, SIGKILL);  // a stopped process dies of SIGKILL without being continued
  return true;
}

bool ChildProcess::kill_for(const std::string& reason) {
  std::lock_guard<std::mutex> lk(mu_);
  if (reaped_ || !kill_reason_.empty()) return false;
  kill_reason_ = reason;
  // The group: whatever the child started dies with it, as in the shutdown ladder.
  killpg(pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  return true;
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
