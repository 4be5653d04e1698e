// bench_moe_mpi (bench/net/moe_mpi_anchor.cpp), the MoE layer on plain MPI,
// under mpirun -np 2 / 4 on this machine: its golden (the moe workload's own,
// workloads/moe_reference.hpp) passes every round, and fails when one output
// element is perturbed (--corrupt), naming the rank and the round; its
// outputs and received rows equal taskring's moe step bit for bit. Few
// rounds; every run bounded (timeout and the binary's --deadline-s).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "mpirun_util.hpp"

namespace {

using taskring::testing::run_bounded;

struct AnchorRun {
  int rc = -1;
  std::string out, err;  // rank 0's stdout (the JSON); every rank's stderr and mpirun's
  nlohmann::json json;   // null when stdout is not JSON
};

// stdout and stderr apart: the JSON must not interleave with stderr lines.
AnchorRun anchor(int np, const std::string& args, bool json = true) {
  char dir[] = "/tmp/taskring_moe_anchor_XXXXXX";
  AnchorRun a;
  if (mkdtemp(dir) == nullptr) return a;
  const std::string err = std::string(dir) + "/err";
  const std::string cmd = std::string(taskring::testing::kMpiEnv) + TASKRING_MPIEXEC +
                          " --allow-run-as-root --oversubscribe --mca btl_vader_single_copy_mechanism none -np " +
                          std::to_string(np) + " " + BENCH_MOE_MPI + (json ? " --json" : "") + " " + args +
                          (args.find("--deadline-s") == std::string::npos ? " --deadline-s 100" : "");
  auto r = run_bounded("sh -c '" + cmd + " 2>" + err + "'", 120);
  a.rc = r.rc;
  a.out = r.out;
  std::ifstream f(err);
  std::stringstream ss;
  ss << f.rdbuf();
  a.err = ss.str();
  std::system(("rm -rf " + std::string(dir)).c_str());
  a.json = nlohmann::json::parse(a.out, nullptr, /*allow_exceptions=*/false);
  if (a.json.is_discarded()) a.json = nullptr;
  return a;
}

TEST(MoeAnchor, TwoRanksPassTheGoldenEveryRound) {
  AnchorRun a = anchor(2, "--rounds 2 --warmup 1");
  ASSERT_EQ(a.rc, 0) << a.out << a.err;
  ASSERT_TRUE(a.json.is_object()) << a.out << a.err;
  EXPECT_EQ(a.json["status"], "ok");
  EXPECT_EQ(a.json["ranks"], 2);
  EXPECT_EQ(a.json["golden"]["checked_rounds"], 3);
  EXPECT_EQ(a.json["golden"]["passed_rounds"], 3);
  EXPECT_TRUE(a.json["golden"]["failure"].is_null());
  // Rank 0's last check compared its received rows and its outputs.
  EXPECT_GT(a.json["golden"]["rank0_last_round"]["checked"].get<uint64_t>(), 16u * 64u);
  EXPECT_EQ(a.json["stats"]["round_us"]["values"].size(), 2u);
  EXPECT_GT(a.json["stats"]["round_us"]["median"].get<double>(), 0.0);
}

TEST(MoeAnchor, FourRanksBalancedPassTheGolden) {
  AnchorRun a = anchor(4, "--rounds 2 --warmup 0 --balanced-routing --tokens 8");
  ASSERT_EQ(a.rc, 0) << a.out << a.err;
  ASSERT_TRUE(a.json.is_object()) << a.out << a.err;
  EXPECT_EQ(a.json["status"], "ok");
  EXPECT_EQ(a.json["golden"]["passed_rounds"], 2);
  EXPECT_EQ(a.json["balanced_routing"], true);
}

// The check can fail: one perturbed output element of the last rank in the
// last round fails the golden there, and only there.
TEST(MoeAnchor, ACorruptedOutputFailsTheGolden) {
  AnchorRun a = anchor(2, "--rounds 2 --warmup 1 --corrupt");
  EXPECT_EQ(a.rc, 1) << a.out << a.err;
  ASSERT_TRUE(a.json.is_object()) << a.out << a.err;
  EXPECT_EQ(a.json["status"], "golden_failed");
  EXPECT_EQ(a.json["golden"]["checked_rounds"], 3);
  EXPECT_EQ(a.json["golden"]["passed_rounds"], 2);
  const auto& f = a.json["golden"]["failure"];
  ASSERT_TRUE(f.is_object()) << a.out;
  EXPECT_EQ(f["rank"], 1);
  EXPECT_EQ(f["round"], 2);
  EXPECT_NE(f["message"].get<std::string>().find("moe out: 1 of 1024 elements outside tolerance"), std::string::npos)
      << f["message"];
  EXPECT_NE(a.err.find("bench_moe_mpi: rank 1 round 2:"), std::string::npos) << a.err;
}

// The same layer computes the same bits: taskring's gating and FFN kernels,
// the received rows in the canonical order, the combine's FP32 sum.
TEST(MoeAnchor, OutputsAndReceivedRowsEqualTaskringsBitForBit) {
  AnchorRun a = anchor(4, "--rounds 1 --warmup 0 --digest --topk 3 --tokens 7", /*json=*/false);
  ASSERT_EQ(a.rc, 0) << a.out << a.err;
  auto t = run_bounded(
      std::string(TASKRING_BIN) + " run moe --chips 4 --rounds 1 --warmup 0 --digest=1 --topk 3 --tokens 7", 120);
  ASSERT_EQ(t.rc, 0) << t.out;
  const auto mine = taskring::testing::moe_digests(a.out), theirs = taskring::testing::moe_digests(t.out);
  EXPECT_EQ(mine.size(), 4u) << a.out;
  EXPECT_EQ(mine, theirs) << a.out << "\n" << t.out;
}

// Nothing hangs: a run still going at its deadline ends, saying so (100000
// rounds with their checks take far longer than 1 s).
TEST(MoeAnchor, ARunPastItsDeadlineEndsSayingSo) {
  AnchorRun a = anchor(2, "--rounds 100000 --warmup 0 --deadline-s 1");
  EXPECT_NE(a.rc, 0) << a.out << a.err;
  EXPECT_NE(a.err.find("still running after --deadline-s 1: ending it"), std::string::npos) << a.err;
}

TEST(MoeAnchor, AShapeThatDoesNotSplitIsRefused) {
  AnchorRun a = anchor(4, "--experts 6 --rounds 1");
  EXPECT_EQ(a.rc, 2) << a.out << a.err;
  EXPECT_NE(a.err.find("experts 6 must be a multiple of the 4 ranks"), std::string::npos) << a.err;
}

}  // namespace
