// `taskring run` and `taskring bench` on node workloads, through the built
// binary (TASKRING_BIN): exit status, the golden line, the validated matrix.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

struct Result {
  int rc = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// `env` (NAME=VALUE ...) is set for the binary only.
Result taskring(const std::string& args, const std::string& env = "") {
  char dir[] = "/tmp/taskring_node_cli_XXXXXX";
  Result r;
  if (mkdtemp(dir) == nullptr) return r;
  const std::string d = dir;
  // `timeout` bounds the child: a hang fails the test instead of stalling it.
  const std::string cmd =
      "timeout 240 env " + env + " " + std::string(TASKRING_BIN) + " " + args + " > " + d + "/out 2> " + d + "/err";
  const int st = std::system(cmd.c_str());
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = slurp(d + "/out");
  r.err = slurp(d + "/err");
  std::system(("rm -rf " + d).c_str());
  return r;
}

TEST(NodeCli, RunMultiChipPassesItsGolden) {
  Result r = taskring("run multi_chip --chips 3 --rounds 2 --warmup 1");
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("2 of 2 measured rounds passed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 chips"), std::string::npos) << r.out;
}

TEST(NodeCli, RunPipelinePassesItsGolden) {
  Result r = taskring("run pipeline --chips 2 --rounds 1 --warmup 0");
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("1 of 1 measured rounds passed"), std::string::npos) << r.out;
}

TEST(NodeCli, BadChipCountIsAUsageError) {
  Result r = taskring("run multi_chip --chips 0");
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
}

TEST(NodeCli, BenchValidatesEveryChipRoundCell) {
  Result r = taskring("bench multi_chip --chips 3 --rounds 3 --warmup 1");
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("9/9 cells valid"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("host speed (diagnostic: a fixed chunk on each CPU before and after the rounds, us): cpu"),
            std::string::npos)
      << r.out;
  r = taskring("bench multi_chip --chips 3 --rounds 3 --warmup 1 --json");
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  for (const char* key : {"\"host_speed\"", "\"before_us\"", "\"after_us\"", "\"steady\""})
    EXPECT_NE(r.out.find(key), std::string::npos) << key << " missing in\n" << r.out;
}

// A runner that fails before any chip ran leaves no span: the matrix is
// invalid (exit 3), and the bench must still say why.
TEST(NodeCli, BenchShowsWhyItsRunnerFailedBeforeAnyRound) {
  Result r = taskring("bench multi_chip --chips 3 --rounds 3 --warmup 1", "TASKRING_RUN_INLINE=sometimes");
  EXPECT_EQ(r.rc, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("the node runner failed (exit 1)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("TASKRING_RUN_INLINE"), std::string::npos) << r.err;
}

}  // namespace

// Issue 38, finding 10: the options are checked before any round runs. A
// typo (`--chip` for `--chips`) or a stray argument used to run every round
// first, print "passed", and only then exit 2.
TEST(NodeCli, OptionsAreCheckedBeforeAnyRound) {
  for (const char* args :
       {"run multi_chip --rounds 2 --warmup 0 --chip 3", "run multi_chip --rounds 2 --warmup 0 stray"}) {
    Result r = taskring(args);
    EXPECT_EQ(r.rc, 2) << args << "\n" << r.out << r.err;
    EXPECT_EQ(r.out.find("measured rounds passed"), std::string::npos) << args << " ran its rounds:\n" << r.out;
    EXPECT_EQ(r.out.find("golden"), std::string::npos) << args << " ran its rounds:\n" << r.out;
  }
  Result r = taskring("run multi_chip --rounds 2 --warmup 0 --chip 3");
  EXPECT_NE(r.err.find("--chip"), std::string::npos) << r.err;
}

TEST(NodeCli, KnownWorkloadsIncludeTheNodeWorkloads) {
  Result r = taskring("run no_such_workload");
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
  for (const char* name : {"vector", "multi_chip", "pipeline", "moe"})
    EXPECT_NE(r.err.find(name), std::string::npos) << name << " missing from: " << r.err;
}

// Issue 38, finding 13: input that used to be dropped without a word.
TEST(NodeCli, SimThreadsZeroIsRefusedForNodeWorkloads) {
  Result r = taskring("run multi_chip --chips 2 --rounds 1 --warmup 0", "TASKRING_SIM_THREADS=0");
  EXPECT_NE(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("TASKRING_SIM_THREADS"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("measured rounds passed"), std::string::npos) << r.out;
}

TEST(NodeCli, BenchRefusesRanksForANodeWorkload) {
  Result r = taskring("bench multi_chip --ranks 4 --chips 2 --rounds 1 --warmup 0");
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--ranks"), std::string::npos) << r.err;
}
