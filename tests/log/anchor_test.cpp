// The clock anchor: exactly once per process, before its first TIMING
// record, and again in every forked child. Each case runs in a fresh forked
// child so this binary's earlier records do not matter.
#include <unistd.h>

#include <map>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "log_test_util.hpp"
#include "taskring/log/logger.hpp"

namespace taskring::log {
namespace {

using namespace testing;

struct Anchor {
  int64_t pid = 0;
  uint64_t mono = 0, wall = 0, envelope_mono = 0;
};

std::optional<Anchor> parse_anchor(const Envelope& e) {
  if (e.func != "clock_anchor" || e.level != "TIMING") return std::nullopt;
  Anchor a;
  a.envelope_mono = e.mono_ns;
  long long pid = 0;
  unsigned long long mono = 0, wall = 0;
  int used = 0;
  if (std::sscanf(e.message.c_str(), "[CLOCK_ANCHOR] v=1 pid=%lld mono_ns=%llu wall_ns=%llu%n", &pid, &mono, &wall,
                  &used) != 3 ||
      static_cast<size_t>(used) != e.message.size())
    return std::nullopt;
  a.pid = pid;
  a.mono = mono;
  a.wall = wall;
  return a;
}

// Forks `body` with the logger writing into a pipe; returns all it wrote.
std::string run_in_child(const std::function<void(int fd)>& body) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    set_output_fd(fds[1]);
    body(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  bool eof = false;
  std::string text = read_until_eof(fds[0], Deadline::after_ms(30000), &eof);
  ::close(fds[0]);
  EXPECT_TRUE(eof);
  EXPECT_TRUE(wait_children({pid}, Deadline::after_ms(30000)));
  return text;
}

TEST(ClockAnchor, OncePerProcessBeforeFirstTimingRecordAndAgainAfterFork) {
  std::string text = run_in_child([](int) {
    set_threshold(Level::kDebug);
    logf(Level::kWarn, "f", "warn pid=%d", static_cast<int>(getpid()));
    logf(Level::kInfo, "f", "info pid=%d", static_cast<int>(getpid()));
    for (int i = 0; i < 3; ++i) logf(Level::kTiming, "f", "timing pid=%d i=%d", static_cast<int>(getpid()), i);
    pid_t grandchild = ::fork();
    if (grandchild == 0) {
      for (int i = 0; i < 2; ++i) logf(Level::kTiming, "f", "timing pid=%d i=%d", static_cast<int>(getpid()), i);
      ::_exit(0);
    }
    wait_children({grandchild}, Deadline::after_ms(20000));
    logf(Level::kTiming, "f", "timing pid=%d i=%d", static_cast<int>(getpid()), 3);
  });
  bool complete = false;
  std::vector<std::string> lines = split_lines(text, &complete);
  ASSERT_TRUE(complete);
  std::map<int64_t, int> anchors;       // pid -> count
  std::map<int64_t, bool> anchor_seen;  // pid -> anchor came before its timing records
  int timing_records = 0;
  for (const std::string& line : lines) {
    auto e = parse_envelope(line);
    ASSERT_TRUE(e.has_value()) << line;
    if (auto a = parse_anchor(*e)) {
      ++anchors[a->pid];
      anchor_seen[a->pid] = true;
      EXPECT_EQ(a->mono, a->envelope_mono);
      EXPECT_GT(a->wall, 1500000000ull * 1000000000ull);  // after 2017: a real wall clock
      continue;
    }
    ASSERT_NE(e->func, "clock_anchor") << line;
    int pid = 0;
    if (e->level == "TIMING") {
      ASSERT_EQ(std::sscanf(e->message.c_str(), "timing pid=%d", &pid), 1) << line;
      EXPECT_TRUE(anchor_seen[pid]) << "TIMING record before the anchor of pid " << pid;
      ++timing_records;
    } else {
      ASSERT_EQ(std::sscanf(e->message.c_str(), "%*s pid=%d", &pid), 1) << line;
    }
  }
  EXPECT_EQ(timing_records, 6);
  ASSERT_EQ(anchors.size(), 2u) << text;  // the child and the grandchild
  for (auto [pid, n] : anchors) EXPECT_EQ(n, 1) << "pid " << pid;
}

TEST(ClockAnchor, RacingThreadsEmitExactlyOneAnchorFirst) {
  std::string text = run_in_child([](int) {
    set_threshold(Level::kTiming);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([t] {
        for (int i = 0; i < 50; ++i) logf(Level::kTiming, "racer", "t=%d i=%d", t, i);
      });
    }
    for (auto& th : threads) th.join();
  });
  std::vector<std::string> lines = split_lines(text);
  ASSERT_EQ(lines.size(), 1u + 8 * 50);
  auto first = parse_envelope(lines[0]);
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(parse_anchor(*first).has_value()) << lines[0];
  for (size_t i = 1; i < lines.size(); ++i) {
    auto e = parse_envelope(lines[i]);
    ASSERT_TRUE(e.has_value()) << lines[i];
    EXPECT_EQ(e->func, "racer");
  }
}

TEST(ClockAnchor, NotEmittedWithoutTimingRecords) {
  std::string text = run_in_child([](int) {
    set_threshold(Level::kDebug);
    logf(Level::kInfo, "f", "a");
    logf(Level::kError, "f", "b");
  });
  EXPECT_EQ(text.find("CLOCK_ANCHOR"), std::string::npos) << text;
  EXPECT_EQ(split_lines(text).size(), 2u);
}

}  // namespace
}  // namespace taskring::log
