// `taskring bench` tells the truth (issue 11): it captures its ranks' spans
// whatever TASKRING_LOG_LEVEL or TASKRING_STRACE_DIR say, names each failed
// rank with its pid, exit status or signal and last stderr lines, refuses an
// unwritable --log, and no rank outlives a killed parent.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The pids whose parent is `parent`, from /proc.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    std::string stat = slurp("/proc/" + std::string(e->d_name) + "/stat");
    size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    char state = 0;
    long ppid = 0;
    if (std::sscanf(stat.c_str() + paren + 1, " %c %ld", &state, &ppid) == 2 && ppid == parent && state != 'Z') {
      out.push_back(static_cast<pid_t>(pid));
    }
  }
  closedir(d);
  return out;
}

class BenchCli : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/taskring-bench-cli-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

  // Starts `taskring <args>` with extra environment; stdout and stderr go to
  // files under dir_.
  pid_t start(const std::vector<std::string>& args, const std::vector<std::pair<std::string, std::string>>& env = {},
              bool ignore_sigpipe = false) {
    pid_t pid = fork();
    if (pid == 0) {
      if (ignore_sigpipe) signal(SIGPIPE, SIG_IGN);  // inherited across exec and fork
      for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      int out = open((dir_ + "/stdout.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int err = open((dir_ + "/stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(out, 1);
      dup2(err, 2);
      std::vector<char*> argv;
      std::string bin = TASKRING_BIN;
      argv.push_back(bin.data());
      std::vector<std::string> copy = args;
      for (auto& a : copy) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(bin.c_str(), argv.data());
      _exit(127);
    }
    return pid;
  }

  // Waits for `pid` (bench bounds itself with --timeout-ms); returns its exit status.
  int finish(pid_t pid) {
    int st = 0;
    waitpid(pid, &st, 0);
    out_ = slurp(dir_ + "/stdout.txt");
    err_ = slurp(dir_ + "/stderr.txt");
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }

  int run(const std::vector<std::string>& args, const std::vector<std::pair<std::string, std::string>>& env = {}) {
    return finish(start(args, env));
  }

  // Waits up to 30 s until `parent` has `n` live children; returns them.
  std::vector<pid_t> wait_children(pid_t parent, size_t n) {
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    std::vector<pid_t> kids;
    while (Clock::now() < deadline) {
      kids = children_of(parent);
      if (kids.size() >= n) return kids;
      timespec ts{0, 2'000'000};  // polling /proc: there is no event for "forked"
      nanosleep(&ts, nullptr);
    }
    return kids;
  }

  std::string dir_, out_, err_;
};

const std::vector<std::string> kSmall = {"bench",    "vector", "--ranks",      "2",    "--rounds", "2",
                                         "--warmup", "1",      "--timeout-ms", "60000"};

TEST_F(BenchCli, SpansAreCapturedWhateverTheLogLevel) {
  EXPECT_EQ(run(kSmall, {{"TASKRING_LOG_LEVEL", "error"}}), 0) << out_ << err_;
  EXPECT_NE(out_.find("trace: OK \xE2\x80\x94 4/4 cells valid"), std::string::npos) << out_;
  EXPECT_EQ(run(kSmall, {{"TASKRING_LOG_LEVEL", "nul"}}), 0) << out_ << err_;
}

// The host-speed control: every CPU probed before and after the ranks, in
// the table and in the JSON (its figures are the host's, not asserted).
TEST_F(BenchCli, ReportsTheHostSpeedBeforeAndAfterTheRanks) {
  EXPECT_EQ(run(kSmall), 0) << out_ << err_;
  EXPECT_NE(out_.find("host speed (diagnostic: a fixed chunk on each CPU before and after the rounds, us): cpu"),
            std::string::npos)
      << out_;
  std::vector<std::string> args = kSmall;
  args.push_back("--json");
  EXPECT_EQ(run(args), 0) << out_ << err_;
  for (const char* key : {"\"host_speed\"", "\"before_us\"", "\"after_us\"", "\"largest_change\"", "\"steady\""})
    EXPECT_NE(out_.find(key), std::string::npos) << key << " missing in\n" << out_;
}

TEST_F(BenchCli, SpansAreCapturedWhateverTheStraceDir) {
  std::string sd = dir_ + "/strace";
  ASSERT_EQ(mkdir(sd.c_str(), 0755), 0);
  std::string log = dir_ + "/run.log";
  std::vector<std::string> args = kSmall;
  args.insert(args.end(), {"--log", log});
  EXPECT_EQ(run(args, {{"TASKRING_STRACE_DIR", sd}}), 0) << out_ << err_;
  EXPECT_NE(out_.find("trace: OK \xE2\x80\x94 4/4 cells valid"), std::string::npos) << out_;
  EXPECT_NE(slurp(log).find("[STRACE] v=1"), std::string::npos);
}

TEST_F(BenchCli, FailedRanksAreNamedWithTheirLastErrorLines) {
  EXPECT_NE(run(kSmall, {{"PTO2_RING_TASK_WINDOW", "abc"}}), 0);
  EXPECT_NE(err_.find("2 of 2 rank(s) failed"), std::string::npos) << err_;
  for (const char* rank : {"rank 0 (pid ", "rank 1 (pid "}) {
    size_t at = err_.find(rank);
    ASSERT_NE(at, std::string::npos) << err_;
    EXPECT_NE(err_.find("exited with status 1", at), std::string::npos) << err_;
  }
  EXPECT_NE(err_.find("| rank 0 round 0: INVALID_ARGUMENT"), std::string::npos) << err_;
  EXPECT_NE(err_.find("PTO2_RING_TASK_WINDOW='abc'"), std::string::npos) << err_;
}

TEST_F(BenchCli, UnwritableLogIsAUsageError) {
  std::vector<std::string> args = kSmall;
  args.insert(args.end(), {"--log", dir_ + "/no/such/dir/run.log"});
  EXPECT_EQ(run(args), 2);
  EXPECT_NE(err_.find("cannot write --log '" + dir_ + "/no/such/dir/run.log'"), std::string::npos) << err_;
  EXPECT_EQ(out_.find("trace:"), std::string::npos) << out_;  // nothing ran
}

TEST_F(BenchCli, KilledRankIsNamedWithItsSignal) {
  pid_t bench =
      start({"bench", "vector", "--ranks", "1", "--rounds", "1000000", "--warmup", "0", "--timeout-ms", "60000"});
  std::vector<pid_t> kids = wait_children(bench, 1);
  ASSERT_EQ(kids.size(), 1u);
  ASSERT_EQ(kill(kids[0], SIGKILL), 0);
  EXPECT_NE(finish(bench), 0);
  EXPECT_NE(err_.find("rank 0 (pid " + std::to_string(kids[0]) + ") killed by signal 9 (SIGKILL)"), std::string::npos)
      << err_;
}

// Node-only options named for a chip workload were silently ignored.
TEST_F(BenchCli, NodeOnlyOptionsAreRefusedForChipWorkloads) {
  for (const std::vector<std::string>& extra :
       std::vector<std::vector<std::string>>{{"--chips", "2"}, {"--nodes", "2"}, {"--runtime", "hbg"}}) {
    std::vector<std::string> args = kSmall;
    args.insert(args.end(), extra.begin(), extra.end());
    EXPECT_EQ(run(args), 2) << extra[0] << "\n" << out_ << err_;
    EXPECT_NE(err_.find(extra[0] + " applies to node workloads only"), std::string::npos) << err_;
    EXPECT_EQ(out_.find("trace:"), std::string::npos) << out_;  // nothing ran
  }
}

// docs/trace.md: bench captures spans at any log level, node workloads too
// (moe used to refuse TASKRING_LOG_LEVEL=WARN).
TEST_F(BenchCli, NodeWorkloadSpansAreCapturedWhateverTheLogLevel) {
  const std::vector<std::string> moe = {"bench",    "moe", "--chips",      "2",     "--rounds", "1",
                                        "--warmup", "0",   "--timeout-ms", "120000"};
  EXPECT_EQ(run(moe, {{"TASKRING_LOG_LEVEL", "WARN"}}), 0) << out_ << err_;
  EXPECT_NE(out_.find("trace: OK"), std::string::npos) << out_;
}

// A --param beyond the int64 range is quoted as given, not as strtoll's clamp.
TEST_F(BenchCli, OutOfRangeParamIsQuotedAsGiven) {
  EXPECT_EQ(run({"bench", "moe", "--chips", "2", "--param", "tokens=99999999999999999999"}), 2) << out_ << err_;
  EXPECT_NE(err_.find("99999999999999999999 is outside the 64-bit integer range"), std::string::npos) << err_;
  EXPECT_EQ(err_.find("9223372036854775807"), std::string::npos) << err_;
}

// A node runner killed by a signal: the signal is named, and the runner's
// messages are messages, not its clock-anchor records.
TEST_F(BenchCli, KilledNodeRunnerIsNamedWithItsSignal) {
  pid_t bench =
      start({"bench", "multi_chip", "--chips", "2", "--rounds", "100000", "--warmup", "0", "--timeout-ms", "120000"});
  std::vector<pid_t> kids = wait_children(bench, 1);
  ASSERT_EQ(kids.size(), 1u);
  // Let the chips start (and write their clock anchors) before the kill.
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < deadline && children_of(kids[0]).size() < 2) {
    timespec ts{0, 2'000'000};
    nanosleep(&ts, nullptr);
  }
  ASSERT_EQ(kill(kids[0], SIGKILL), 0);
  EXPECT_NE(finish(bench), 0);
  EXPECT_NE(err_.find("the node runner failed (killed by signal 9 (SIGKILL))"), std::string::npos) << err_;
  EXPECT_EQ(err_.find("[CLOCK_ANCHOR]"), std::string::npos) << err_;
}

// A rank writing to the dead parent's pipe would die of SIGPIPE, but not
// where SIGPIPE is ignored (as some CI runners and shells leave it), nor while
// it writes nothing: then only PR_SET_PDEATHSIG ends it.
TEST_F(BenchCli, NoRankOutlivesAKilledParent) {
  std::string sd = dir_ + "/strace";
  ASSERT_EQ(mkdir(sd.c_str(), 0755), 0);
  for (const auto& env : std::vector<std::vector<std::pair<std::string, std::string>>>{
           {{"TASKRING_STRACE_DIR", sd}}, {{"TASKRING_LOG_LEVEL", "nul"}}, {}}) {
    pid_t bench = start({"bench", "vector", "--ranks", "2", "--rounds", "1000000", "--warmup", "0"}, env, true);
    std::vector<pid_t> kids = wait_children(bench, 2);
    ASSERT_EQ(kids.size(), 2u);
    std::vector<int> pidfds;
    for (pid_t k : kids) {
      int fd = static_cast<int>(syscall(SYS_pidfd_open, k, 0));
      ASSERT_GE(fd, 0) << "pidfd_open " << k;
      pidfds.push_back(fd);
    }
    ASSERT_EQ(kill(bench, SIGKILL), 0);
    finish(bench);
    for (size_t i = 0; i < pidfds.size(); ++i) {
      pollfd p{pidfds[i], POLLIN, 0};
      EXPECT_EQ(poll(&p, 1, 30000), 1) << "rank pid " << kids[i] << " still running 30 s after its parent died";
      close(pidfds[i]);
    }
  }
}

}  // namespace
