// ChildProcess: the parent's handle on one forked child: liveness, the
// shutdown ladder and reaping. Thread-safe (the scheduler polls liveness
// while the orchestrating thread may wait on a control call).
//
// A child is reaped exactly once; after that its pid is never signalled
// again (it may have been reused). Exit waits use a pidfd, so they block in
// poll(2) with a timeout instead of sleep-polling.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <string>

#include "taskring/base/clock.hpp"
#include "taskring/base/status.hpp"

namespace taskring::node {

// "killed by signal 9 (SIGKILL)" / "exited with status 3".
std::string describe_wait_status(int wait_status);

class ChildProcess {
 public:
  ChildProcess(pid_t pid, std::string label);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Readable once the child has exited; -1 where pidfd_open failed. Open
  // for the object's lifetime.
  int pidfd() const { return pidfd_; }
  // "chip 3 (pid 1234)".
  const std::string& name() const { return name_; }

  // Reaps the child if it has exited (no blocking). OK while it runs;
  // otherwise UNAVAILABLE "<name> <how it ended>".
  Status check();
  bool reaped();
  // Waits for the child to exit until `deadline`; true once reaped.
  bool wait_exit(Deadline deadline);
  // Signals the child's process group (and the child, in case it has not
  // made its group yet). No-op once reaped.
  void signal_group(int sig);
  // The ladder after a SHUTDOWN request: wait for a clean exit until
  // `graceful`, SIGTERM and wait until `term`, then SIGKILL and reap (a
  // SIGKILLed child is reaped within `kill_deadline`). True once reaped.
  bool terminate(Deadline graceful, Deadline term, Deadline kill_deadline);
  // Called periodically (ExitWatch's tick): when the child has been seen
  // stopped (state T or t in /proc) at every call for `limit_ns` since it
  // was first seen so, it is SIGKILLed and check() names why (`knob` is the
  // setting that bounds it). True when this call killed it.
  bool kill_if_stopped_for(uint64_t limit_ns, uint64_t now_ns, const std::string& knob);
  // SIGKILLs the child's process group for `reason` ("ran one chip task
  // for ..."), which check() then reports after the name. True when this
  // call killed it; false once reaped or already killed for a reason.
  bool kill_for(const std::string& reason);

 private:
  bool reap_locked(bool block);
  std::mutex mu_;
  pid_t pid_;
  int pidfd_ = -1;
  bool reaped_ = false;
  int wait_status_ = 0;
  uint64_t stopped_since_ns_ = 0;  // 0: not seen stopped at the last check
  std::string kill_reason_;        // set when kill_if_stopped_for or kill_for killed it
  std::string name_;
};

}  // namespace taskring::node
