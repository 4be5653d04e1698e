// ExitWatch: reports each watched process's exit once, and nothing else.
#include "dag/exit_watch.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "taskring/base/waiter.hpp"

namespace taskring::node {
namespace {

// A child that waits until its pipe closes (or it is killed).
struct Sleeper {
  Sleeper() {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    pid = fork();
    if (pid == 0) {
      close(fds[1]);
      char b;
      (void)!read(fds[0], &b, 1);
      _exit(0);
    }
    close(fds[0]);
    hold = fds[1];
    pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  }
  ~Sleeper() {
    if (hold >= 0) close(hold);
    if (pid > 0) waitpid(pid, nullptr, 0);
    if (pidfd >= 0) close(pidfd);
  }
  pid_t pid = -1;
  int hold = -1, pidfd = -1;
};

struct Seen {
  std::mutex mu;
  std::vector<size_t> exits;
  Waiter w;
  void add(size_t i) {
    {
      std::lock_guard<std::mutex> lk(mu);
      exits.push_back(i);
    }
    w.notify_all();
  }
  size_t count() {
    std::lock_guard<std::mutex> lk(mu);
    return exits.size();
  }
};

TEST(ExitWatch, ReportsEachExitOnceWithItsIndex) {
  Sleeper a, b, c;
  ASSERT_GE(a.pidfd, 0);
  Seen seen;
  ExitWatch watch;
  ASSERT_TRUE(watch.start({a.pidfd, b.pidfd, c.pidfd}, [&](size_t i) { seen.add(i); }).ok());
  EXPECT_FALSE(watch.start({}, [](size_t) {}).ok()) << "a second start is refused";
  kill(b.pid, SIGKILL);
  ASSERT_TRUE(seen.w.wait([&] { return seen.count() >= 1; }, Deadline::after_ms(10000), "b's exit").ok());
  close(c.hold);  // a clean exit counts too
  c.hold = -1;
  ASSERT_TRUE(seen.w.wait([&] { return seen.count() >= 2; }, Deadline::after_ms(10000), "c's exit").ok());
  watch.stop();
  std::lock_guard<std::mutex> lk(seen.mu);
  EXPECT_EQ(seen.exits, (std::vector<size_t>{1, 2})) << "b then c, each once; a still runs";
}

TEST(ExitWatch, StopReturnsWithoutAnExitAndNothingIsReportedAfterIt) {
  Sleeper a;
  ASSERT_GE(a.pidfd, 0);
  Seen seen;
  {
    ExitWatch watch;
    ASSERT_TRUE(watch.start({a.pidfd}, [&](size_t i) { seen.add(i); }).ok());
    EXPECT_TRUE(watch.running());
    watch.stop();
    EXPECT_FALSE(watch.running());
    watch.stop();  // idempotent
  }
  close(a.hold);
  a.hold = -1;
  waitpid(a.pid, nullptr, 0);
  a.pid = -1;
  EXPECT_EQ(seen.count(), 0u);
}

}  // namespace
}  // namespace taskring::node
