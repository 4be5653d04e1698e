// 16 forked children × 1000 records into one pipe and into one shared file
// (O_APPEND, and a plain inherited descriptor with a shared offset, which is
// how benchmark harnesses capture stderr): every line is one intact record,
// every (child, sequence) appears exactly once, each child has one anchor.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "record_check.hpp"

namespace taskring::log {
namespace {

using namespace testing;

constexpr int kChildren = 16;
constexpr int kPerChild = 1000;

// Forks the writers; each waits on `go_fd` (until the parent closes it) so
// all start together, writes into `out_fd` and leaves with _exit.
std::vector<pid_t> fork_writers(int out_fd, int extra_close_fd, bool spans) {
  int go[2];
  EXPECT_EQ(::pipe(go), 0);
  std::vector<pid_t> pids;
  for (int w = 0; w < kChildren; ++w) {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(go[1]);
      if (extra_close_fd >= 0) ::close(extra_close_fd);
      pollfd p{go[0], POLLIN, 0};
      if (::poll(&p, 1, 30000) != 1) ::_exit(3);  // the start signal never came
      set_threshold(Level::kTiming);
      set_output_fd(out_fd);
      spans ? write_span_records(w, kPerChild) : write_log_records(w, kPerChild);
      ::_exit(0);
    }
    EXPECT_GT(pid, 0);
    pids.push_back(pid);
  }
  ::close(go[0]);
  ::close(go[1]);  // start
  return pids;
}

void expect_all_good(const std::string& text, const std::vector<pid_t>& pids, bool spans) {
  std::vector<int> ipids(pids.begin(), pids.end());
  CheckResult r = check_records(text, kChildren, kPerChild, spans, ipids);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.records, kChildren * kPerChild);
  EXPECT_EQ(r.anchors_by_pid.size(), static_cast<size_t>(kChildren));
  for (pid_t pid : pids) EXPECT_EQ(r.anchors_by_pid[pid], 1) << "anchor count of child " << pid;
}

class ForkedWriters : public ::testing::TestWithParam<bool> {};  // param: STRACE spans

TEST_P(ForkedWriters, OnePipe) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::vector<pid_t> pids = fork_writers(fds[1], fds[0], GetParam());
  ::close(fds[1]);
  bool eof = false;
  std::string text = read_until_eof(fds[0], Deadline::after_ms(60000), &eof);
  ::close(fds[0]);
  ASSERT_TRUE(wait_children(pids, Deadline::after_ms(30000)));
  ASSERT_TRUE(eof) << "timed out reading the pipe";
  expect_all_good(text, pids, GetParam());
}

void shared_file_case(bool spans, int open_flags) {
  char path[] = "/tmp/taskring_log_mp_XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  fd = ::open(path, O_WRONLY | O_TRUNC | open_flags);
  ASSERT_GE(fd, 0);
  std::vector<pid_t> pids = fork_writers(fd, -1, spans);
  ::close(fd);
  bool ok = wait_children(pids, Deadline::after_ms(60000));
  std::string text = read_file(path);
  ::unlink(path);
  ASSERT_TRUE(ok);
  expect_all_good(text, pids, spans);
}

TEST_P(ForkedWriters, OneSharedAppendFile) { shared_file_case(GetParam(), O_APPEND); }
TEST_P(ForkedWriters, OneSharedOffsetFile) { shared_file_case(GetParam(), 0); }

INSTANTIATE_TEST_SUITE_P(Log, ForkedWriters, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Strace" : "Logger"; });

}  // namespace
}  // namespace taskring::log
