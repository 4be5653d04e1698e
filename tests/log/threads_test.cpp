// 8 threads of one process write into one pipe and one shared file: every
// line is one intact record and every (thread, sequence) appears once.
#include <fcntl.h>
#include <unistd.h>

#include <thread>

#include <gtest/gtest.h>

#include "record_check.hpp"

namespace taskring::log {
namespace {

using namespace testing;

constexpr int kThreads = 8;
constexpr int kPerThread = 1000;

void run_threads(bool spans) {
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, spans] { spans ? write_span_records(t, kPerThread) : write_log_records(t, kPerThread); });
  }
  for (auto& th : threads) th.join();
}

class ThreadsIntoOneSink : public ::testing::TestWithParam<bool> {};  // param: STRACE spans

TEST_P(ThreadsIntoOneSink, Pipe) {
  LoggerStateGuard guard;
  set_threshold(Level::kTiming);
  PipeCapture cap;
  ASSERT_TRUE(cap.ok());
  set_output_fd(cap.write_fd());
  run_threads(GetParam());
  set_output_fd(2);
  bool eof = false;
  std::string text = cap.finish(&eof);
  ASSERT_TRUE(eof);
  CheckResult r = check_records(text, kThreads, kPerThread, GetParam());
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.records, kThreads * kPerThread);
}

TEST_P(ThreadsIntoOneSink, SharedAppendFile) {
  LoggerStateGuard guard;
  set_threshold(Level::kTiming);
  char path[] = "/tmp/taskring_log_threads_XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  fd = ::open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  set_output_fd(fd);
  run_threads(GetParam());
  set_output_fd(2);
  ::close(fd);
  std::string text = read_file(path);
  ::unlink(path);
  CheckResult r = check_records(text, kThreads, kPerThread, GetParam());
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.records, kThreads * kPerThread);
}

INSTANTIATE_TEST_SUITE_P(Log, ThreadsIntoOneSink, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Strace" : "Logger"; });

}  // namespace
}  // namespace taskring::log
