// L4 with one chip per node at 8 ranks (and 16 under `make test-slow`),
// issue 36 item 5: `taskring run multi_chip` passes every node's golden
// each round, and the MoE step over N nodes of one chip is bit for bit the
// MoE step of one node of N chips (the digests of every rank's output and
// received rows). mpirun --oversubscribe places every rank on this machine.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <sstream>

#include "mpirun_util.hpp"

namespace {

using taskring::testing::MpiResult;
using taskring::testing::mpirun;
using taskring::testing::run_bounded;

constexpr int kBoundS = 240;  // a hang fails the test instead of stalling CTest

// 8 ranks in every run; 16 in the slow one (TASKRING_SLOW_TESTS=1).
int ranks() {
  const char* slow = std::getenv("TASKRING_SLOW_TESTS");
  return slow != nullptr && std::string(slow) == "1" ? 16 : 8;
}

TEST(NetScale, MultiChipOnOneChipPerNodePassesEveryGolden) {
  const int n = ranks();
  const std::string nodes = std::to_string(n);
  MpiResult r = mpirun(
      n, std::string(TASKRING_BIN) + " run multi_chip --nodes " + nodes + " --chips 1 --rounds 2 --warmup 0", kBoundS);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("golden PASS on " + nodes + " nodes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 of 2 measured rounds passed on every node"), std::string::npos) << r.out;
}

TEST(NetScale, MoeOnOneChipPerNodeEqualsOneNodeOfAsManyChips) {
  const int n = ranks();
  const std::string shape = " --rounds 2 --digest=1";
  MpiResult spread =
      mpirun(n, std::string(TASKRING_BIN) + " run moe --nodes " + std::to_string(n) + " --chips 1" + shape, kBoundS);
  MpiResult one = run_bounded(std::string(TASKRING_BIN) + " run moe --chips " + std::to_string(n) + shape, kBoundS);
  ASSERT_EQ(one.rc, 0) << one.out;
  EXPECT_EQ(spread.rc, 0) << spread.out;
  EXPECT_NE(spread.out.find("2 of 2 measured rounds passed on every node"), std::string::npos) << spread.out;
  const auto a = taskring::testing::moe_digests(spread.out), b = taskring::testing::moe_digests(one.out);
  EXPECT_EQ(b.size(), static_cast<size_t>(n)) << one.out;  // one line per rank, the same every round
  EXPECT_EQ(a, b) << "across nodes:\n" << spread.out << "\none node:\n" << one.out;
}

}  // namespace
