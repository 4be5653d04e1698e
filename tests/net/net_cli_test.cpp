// `taskring run/bench <node workload> --nodes N` under mpirun -np N, through
// the built binary: every node's golden each round, and the (chip rank,
// round) matrix of N x C chips validated from spans gathered over MPI.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>

#include "mpirun_util.hpp"

namespace {

using taskring::testing::mpirun;

const std::string kBin = TASKRING_BIN;

TEST(NetCli, RunMultiChipOnTwoNodesPassesEveryGolden) {
  auto r = mpirun(2, kBin + " run multi_chip --nodes 2 --chips 2 --rounds 3 --warmup 1", 150);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("2 nodes x 2 chips"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 of 3 measured rounds passed on every node"), std::string::npos) << r.out;
}

TEST(NetCli, RunPipelineOnThreeNodes) {
  auto r = mpirun(3, kBin + " run pipeline --nodes 3 --chips 2 --rounds 2 --warmup 0", 150);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("2 of 2 measured rounds passed on every node"), std::string::npos) << r.out;
}

TEST(NetCli, NodesMustMatchTheRanks) {
  auto r = mpirun(2, kBin + " run multi_chip --nodes 3 --chips 1", 150);
  EXPECT_NE(r.rc, 0) << r.out;
  EXPECT_NE(r.rc, 124) << r.out;
  EXPECT_NE(r.out.find("--nodes 3 but mpirun started 2 ranks"), std::string::npos) << r.out;
}

TEST(NetCli, BenchValidatesEveryChipOfEveryNodeAndRound) {
  char dir[] = "/tmp/taskring_net_cli_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string log = std::string(dir) + "/spans.log";
  auto r = mpirun(2, kBin + " bench multi_chip --nodes 2 --chips 2 --rounds 3 --warmup 1 --json --log " + log, 150);
  EXPECT_EQ(r.rc, 0) << r.out;
  // 2 nodes x 2 chips = 4 chip ranks, 3 rounds: 12 cells, every one valid.
  EXPECT_NE(r.out.find("\"valid_cells\": 12"), std::string::npos) << r.out;
  // Each node timed its own CPUs before the first round and after the last.
  const size_t hs = r.out.find("\"host_speed\"");
  ASSERT_NE(hs, std::string::npos) << r.out;
  std::string host;
  for (char c : r.out.substr(hs, r.out.find('}', hs) - hs))
    if (!std::isspace(static_cast<unsigned char>(c))) host += c;
  EXPECT_NE(host.find("\"nodes\":[0,1]"), std::string::npos) << host;
  EXPECT_NE(host.find("\"after_us\":["), std::string::npos) << host;
  // The gathered spans validate again with `taskring trace`.
  const std::string cmd = kBin + " trace " + log + " --expect-ranks 4 --expect-rounds 3 --warmup 1 --rank-by attr > " +
                          std::string(dir) + "/out 2>&1";
  const int st = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  std::ifstream f(std::string(dir) + "/out");
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_NE(ss.str().find("12/12 cells valid"), std::string::npos) << ss.str();
  std::system(("rm -rf " + std::string(dir)).c_str());
}

// Issue 38, finding 1: the startup handshake carries what defines the job.
// Each case starts two ranks with different commands (MPMD); every rank's
// init must fail, naming rank 1 and the field, and no round may run.
size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

void expect_refused(const std::string& rank0, const std::string& rank1, const std::string& field) {
  auto r = mpirun(1, rank0 + " : -np 1 " + rank1, 150);
  EXPECT_NE(r.rc, 0) << r.out;
  EXPECT_NE(r.rc, 124) << r.out;
  EXPECT_EQ(r.out.find("passed on every node"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("golden"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank 1 (pid"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(field), std::string::npos) << field << " not named in\n" << r.out;
  EXPECT_GE(count(r.out, "runs another job"), 2u) << "every rank must refuse:\n" << r.out;
}

TEST(NetCli, RanksRunningDifferentWorkloadsAreRefused) {
  expect_refused(kBin + " run multi_chip --nodes 2 --chips 2 --rounds 2 --warmup 0",
                 kBin + " run pipeline --nodes 2 --chips 2 --rounds 2 --warmup 0",
                 "workload is 'pipeline', rank 0 has 'multi_chip'");
}

TEST(NetCli, RanksWithDifferentChipsAreRefused) {
  expect_refused(kBin + " run multi_chip --nodes 2 --chips 2 --rounds 2 --warmup 0",
                 kBin + " run multi_chip --nodes 2 --chips 3 --rounds 2 --warmup 0", "chips is '3', rank 0 has '2'");
}

TEST(NetCli, RanksWithDifferentNodesAreRefused) {
  expect_refused(kBin + " run multi_chip --nodes 2 --chips 2 --rounds 2 --warmup 0",
                 kBin + " run multi_chip --nodes 3 --chips 2 --rounds 2 --warmup 0",
                 "--nodes 3 but mpirun started 2 ranks");
}

TEST(NetCli, RanksWithDifferentParametersAreRefused) {
  expect_refused(kBin + " run pipeline --nodes 2 --chips 2 --rounds 2 --warmup 0",
                 kBin + " run pipeline --nodes 2 --chips 2 --rounds 2 --warmup 0 --seed 7",
                 "--seed is '7', rank 0 has '1'");
  expect_refused(kBin + " run pipeline --nodes 2 --chips 2 --rounds 2 --warmup 0",
                 kBin + " run pipeline --nodes 2 --chips 2 --rounds 2 --warmup 0 --runtime hbg",
                 "runtime is 'hbg', rank 0 has 'tmr'");
}

// Another build: the same binary with one byte appended still runs, but is
// not the same build.
TEST(NetCli, RanksRunningAnotherBuildAreRefused) {
  char dir[] = "/tmp/taskring_net_build_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string other = std::string(dir) + "/taskring";
  ASSERT_EQ(std::system(("cp " + kBin + " " + other + " && printf x >> " + other).c_str()), 0);
  expect_refused(kBin + " run multi_chip --nodes 2 --chips 2 --rounds 2 --warmup 0",
                 other + " run multi_chip --nodes 2 --chips 2 --rounds 2 --warmup 0", "build is '");
  std::system(("rm -rf " + std::string(dir)).c_str());
}

// Issue 38, finding 8: the first error of a run that cannot continue ends
// the command with one message. Rank 1 is stopped (SIGSTOP) while the rounds
// run; once rank 0 declares it lost (peer_timeout_ms, 10 s) every later round
// would fail at once: before, ~280 000 "golden FAIL" rows in the 2 s before
// MPI_Abort; now one failed round and one message.
TEST(NetCli, ALostRankEndsTheRoundsWithOneMessage) {
  char dir[] = "/tmp/taskring_net_lost_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string d = dir;
  const std::string args = " run multi_chip --nodes 2 --chips 1 --rounds 1000000 --warmup 0";
  {
    // Rank 1 writes its pid, then becomes the taskring process (exec).
    std::ofstream r1(d + "/rank1.sh");
    r1 << "echo $$ > " << d << "/rank1.pid\nexec " << kBin << args << "\n";
    // stdbuf: rank 0's rows reach the output as they are printed, so the
    // test stops rank 1 only once the rounds run (not during the handshake).
    std::ofstream drv(d + "/drive.sh");
    drv << TASKRING_MPIEXEC << " --allow-run-as-root --oversubscribe --mca btl_vader_single_copy_mechanism none"
        << " -np 1 stdbuf -oL " << kBin << args << " : -np 1 sh " << d << "/rank1.sh > " << d << "/out 2>&1 &\n"
        << "job=$!\n"
        << "for i in $(seq 600); do grep -q '^round' " << d << "/out 2>/dev/null && break; sleep 0.1; done\n"
        << "grep -q '^round' " << d << "/out || { echo NO-ROUNDS; kill $job; wait $job; exit 7; }\n"
        << "kill -STOP $(cat " << d << "/rank1.pid)\n"
        << "wait $job\n"
        << "echo MPIRUN-RC=$?\n"
        << "cat " << d << "/out\n";
  }
  auto r = taskring::testing::run_bounded("sh " + d + "/drive.sh", 150);
  // Rank 1 is normally gone with the job (MPI_Abort); never leave it stopped.
  std::system(("kill -KILL $(cat " + d + "/rank1.pid 2>/dev/null) 2>/dev/null; rm -rf " + d).c_str());
  ASSERT_NE(r.rc, 124) << "the job did not end:\n" << r.out.substr(0, 4000);
  ASSERT_EQ(r.out.find("NO-ROUNDS"), std::string::npos) << r.out.substr(0, 4000);
  EXPECT_EQ(r.out.find("MPIRUN-RC=0"), std::string::npos) << r.out.substr(0, 4000);
  EXPECT_LE(count(r.out, "FAIL"), 1u) << r.out.substr(r.out.size() > 4000 ? r.out.size() - 4000 : 0);
  EXPECT_EQ(count(r.out, "failed; stopping"), 1u) << r.out.substr(r.out.size() > 4000 ? r.out.size() - 4000 : 0);
  EXPECT_NE(r.out.find("rank 1"), std::string::npos) << r.out.substr(r.out.size() > 4000 ? r.out.size() - 4000 : 0);
}

}  // namespace
