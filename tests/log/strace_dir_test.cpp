// TASKRING_STRACE_DIR: spans go to <dir>/strace.<pid>.log, one file per
// process, flushed at the end of each top-level span; a forked child opens
// its own file and never repeats its parent's buffered spans. Each case runs
// in a forked child so the process-wide sink stays untouched here.
#include <dirent.h>
#include <unistd.h>

#include <set>

#include <gtest/gtest.h>

#include "log_test_util.hpp"
#include "taskring/log/init.hpp"
#include "taskring/log/strace.hpp"

namespace taskring::log::strace {
namespace {

using namespace taskring::log::testing;

struct FileSpans {
  std::vector<std::string> names;
  std::set<int64_t> pids;
  int anchors = 0;
  bool anchor_first = false;
  std::string error;
};

FileSpans read_spans(const std::string& path) {
  FileSpans f;
  bool complete = false;
  std::vector<std::string> lines = split_lines(read_file(path), &complete);
  if (!complete) f.error = "file does not end in a newline";
  for (size_t i = 0; i < lines.size(); ++i) {
    auto e = parse_envelope(lines[i]);
    if (!e) {
      f.error = "bad line " + lines[i];
      continue;
    }
    if (e->func == "clock_anchor") {
      ++f.anchors;
      f.anchor_first = f.anchor_first || i == 0;
      continue;
    }
    auto s = parse_span(e->message);
    if (!s) {
      f.error = "bad span " + lines[i];
      continue;
    }
    f.names.push_back(s->name);
    f.pids.insert(s->pid);
  }
  return f;
}

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* ent = ::readdir(d)) {
    std::string n = ent->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

class StraceDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/taskring_strace_dir_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(::pipe(log_pipe_), 0);
  }
  void TearDown() override {
    for (const std::string& n : list_dir(dir_)) ::unlink((dir_ + "/" + n).c_str());
    ::rmdir(dir_.c_str());
  }
  // Runs `body` in a child whose log fd is a pipe; returns what reached it.
  std::string run_child(const std::function<int()>& body, pid_t* child) {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(log_pipe_[0]);
      set_output_fd(log_pipe_[1]);
      ::_exit(body());
    }
    *child = pid;
    ::close(log_pipe_[1]);
    bool eof = false;
    std::string text = read_until_eof(log_pipe_[0], Deadline::after_ms(30000), &eof);
    ::close(log_pipe_[0]);
    EXPECT_TRUE(eof);
    EXPECT_TRUE(wait_children({pid}, Deadline::after_ms(30000)));
    return text;
  }
  std::string dir_;
  int log_pipe_[2] = {-1, -1};
};

TEST_F(StraceDir, PerPidFilesIncludingAfterFork) {
  pid_t child = 0;
  std::string log_text = run_child(
      [this]() -> int {
        if (!init_logging(map_env({{"TASKRING_STRACE_DIR", dir_}})).ok()) return 10;
        InvocationScope run(fnv1a64("c"));
        {
          StraceSpan root("dir.root");
          StraceSpan inner("dir.inner");
        }
        // Buffered (depth 1), still unflushed at the fork below.
        emit_span("dir.pending", 1, 1, run.inv(), 1, 1);
        pid_t gc = ::fork();
        if (gc == 0) {
          emit_span("dir.grandchild", 2, 2, 9, 9, 0);  // top-level: flushed now
          ::_exit(0);
        }
        if (!wait_children({gc}, Deadline::after_ms(20000))) return 11;
        TR_LOG_WARN("human records stay on the log fd");
        flush_strace();
        return 0;
      },
      &child);
  EXPECT_EQ(log_text.find("[STRACE]"), std::string::npos) << log_text;
  EXPECT_NE(log_text.find("human records stay on the log fd"), std::string::npos) << log_text;
  std::vector<std::string> files = list_dir(dir_);
  ASSERT_EQ(files.size(), 2u);
  std::string child_file = "strace." + std::to_string(child) + ".log";
  ASSERT_TRUE(files[0] == child_file || files[1] == child_file) << files[0] << " " << files[1];
  std::string gc_file = files[0] == child_file ? files[1] : files[0];

  FileSpans mine = read_spans(dir_ + "/" + child_file);
  EXPECT_EQ(mine.error, "");
  EXPECT_EQ(mine.anchors, 1);
  EXPECT_TRUE(mine.anchor_first);
  EXPECT_EQ(mine.names, (std::vector<std::string>{"dir.inner", "dir.root", "dir.pending"}));
  EXPECT_EQ(mine.pids, std::set<int64_t>{child});

  FileSpans theirs = read_spans(dir_ + "/" + gc_file);
  EXPECT_EQ(theirs.error, "");
  EXPECT_EQ(theirs.anchors, 1);
  EXPECT_TRUE(theirs.anchor_first);
  EXPECT_EQ(theirs.names, (std::vector<std::string>{"dir.grandchild"}));
  ASSERT_EQ(theirs.pids.size(), 1u);
  EXPECT_EQ("strace." + std::to_string(*theirs.pids.begin()) + ".log", gc_file);
}

TEST_F(StraceDir, ManyForkedRanksNeverShareAFile) {
  constexpr int kRanks = 8, kSpans = 200;
  pid_t child = 0;
  run_child(
      [this]() -> int {
        if (!set_strace_dir(dir_).ok()) return 10;
        std::vector<pid_t> ranks;
        for (int r = 0; r < kRanks; ++r) {
          pid_t pid = ::fork();
          if (pid == 0) {
            for (int i = 0; i < kSpans; ++i) emit_span("rank.span", i, r, static_cast<uint64_t>(i) + 1, 1, 0);
            ::_exit(0);
          }
          ranks.push_back(pid);
        }
        return wait_children(ranks, Deadline::after_ms(30000)) ? 0 : 11;
      },
      &child);
  std::vector<std::string> files = list_dir(dir_);
  EXPECT_EQ(files.size(), static_cast<size_t>(kRanks));
  for (const std::string& f : files) {
    FileSpans s = read_spans(dir_ + "/" + f);
    EXPECT_EQ(s.error, "");
    EXPECT_EQ(s.names.size(), static_cast<size_t>(kSpans)) << f;
    ASSERT_EQ(s.pids.size(), 1u) << f;
    EXPECT_EQ("strace." + std::to_string(*s.pids.begin()) + ".log", f);
    EXPECT_EQ(s.anchors, 1);
  }
}

TEST_F(StraceDir, ExitFlushesBufferedSpans) {
  std::fflush(nullptr);  // the child's exit(3) must not repeat our stdio buffers
  pid_t child = 0;
  run_child(
      [this]() -> int {
        if (!set_strace_dir(dir_).ok()) return 10;
        emit_span("dir.nested_only", 1, 1, 1, 1, 2);  // never a top-level span: only exit flushes it
        std::exit(0);
      },
      &child);
  FileSpans s = read_spans(dir_ + "/strace." + std::to_string(child) + ".log");
  EXPECT_EQ(s.error, "");
  EXPECT_EQ(s.names, std::vector<std::string>{"dir.nested_only"});
}

TEST_F(StraceDir, RejectsMissingDirectory) {
  Status s = set_strace_dir(dir_ + "/does-not-exist");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("does-not-exist"), std::string::npos);
  ::close(log_pipe_[0]);
  ::close(log_pipe_[1]);
}

}  // namespace
}  // namespace taskring::log::strace
