// trace::capture_stream: everything a job writes is captured, whatever the
// rounds' sizes, and a job that never ends is cut at the deadline.
#include "taskring/trace/capture.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace taskring::trace {
namespace {

// A forked job writing to `data` and ticking on `tick`, as a bench runner.
struct Job {
  template <typename Body>
  explicit Job(Body body) {
    EXPECT_EQ(pipe(data), 0);
    EXPECT_EQ(pipe(tick), 0);
    EXPECT_EQ(pipe(hold), 0);
    pid = fork();
    if (pid == 0) {
      close(data[0]);
      close(tick[0]);
      close(hold[1]);
      body(data[1], tick[1], hold[0]);
      _exit(0);
    }
    close(data[1]);
    close(tick[1]);
    close(hold[0]);
  }
  ~Job() {
    close(hold[1]);  // lets a holding job end
    close(data[0]);
    close(tick[0]);
    if (pid > 0) waitpid(pid, nullptr, 0);
  }
  int data[2], tick[2], hold[2];
  pid_t pid = -1;
};

void write_all(int fd, const std::string& s) {
  size_t at = 0;
  while (at < s.size()) {
    const ssize_t n = write(fd, s.data() + at, s.size() - at);
    if (n <= 0) _exit(1);
    at += static_cast<size_t>(n);
  }
}

void tick_once(int fd) { write_all(fd, std::string(1, '\0')); }

TEST(CaptureStream, RoundsBetweenTicksAreCapturedInOrder) {
  Job job([](int data, int tick, int) {
    for (char c : std::string("abc")) {
      write_all(data, std::string(1000, c));
      tick_once(tick);
    }
  });
  Captured got = capture_stream(job.data[0], job.tick[0], Deadline::after_ms(20000), 0);
  EXPECT_FALSE(got.timed_out);
  EXPECT_EQ(got.bytes, std::string(1000, 'a') + std::string(1000, 'b') + std::string(1000, 'c'));
}

// A round that writes more than the pipe holds before its tick blocks its
// writer until a drain: the backstop and then following the data keep it
// going (a reader waiting for the tick alone would deadlock with it).
TEST(CaptureStream, ARoundLargerThanThePipeStillCompletes) {
  const std::string big(5u << 20, 'x');
  Job job([&](int data, int tick, int) {
    write_all(data, big);
    tick_once(tick);
    write_all(data, "end");
  });
  Captured got = capture_stream(job.data[0], job.tick[0], Deadline::after_ms(60000), 0);
  EXPECT_FALSE(got.timed_out);
  ASSERT_EQ(got.bytes.size(), big.size() + 3);
  EXPECT_EQ(got.bytes.substr(big.size()), "end");
}

TEST(CaptureStream, WithoutTicksItFollowsTheStream) {
  Job job([](int data, int, int) { write_all(data, "only data"); });
  close(job.tick[0]);
  job.tick[0] = -1;
  Captured got = capture_stream(job.data[0], -1, Deadline::after_ms(20000), 0);
  EXPECT_FALSE(got.timed_out);
  EXPECT_EQ(got.bytes, "only data");
}

TEST(CaptureStream, TheDeadlineEndsItWithWhatArrived) {
  Job job([](int data, int tick, int hold) {
    write_all(data, "partial");
    tick_once(tick);
    char b;
    (void)!read(hold, &b, 1);  // never ends on its own
  });
  Captured got = capture_stream(job.data[0], job.tick[0], Deadline::after_ms(300), 0);
  EXPECT_TRUE(got.timed_out);
  EXPECT_EQ(got.bytes, "partial");
  kill(job.pid, SIGKILL);
}

}  // namespace
}  // namespace taskring::trace
