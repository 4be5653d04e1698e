// L4 across 3 MPI ranks on this machine (net_mpi_driver under mpirun): a
// remote task round trip, dependencies across nodes (the offset-overlap
// case included), a failing remote task, bad descriptors, startup
// mismatches, and a rank that dies or hangs (bounded, error names it).
#include <gtest/gtest.h>

#include "mpirun_util.hpp"

namespace {

using taskring::testing::MpiResult;
using taskring::testing::mpirun;

// Bound of one scenario; a hang fails the test instead of stalling CTest.
constexpr int kBoundS = 120;

MpiResult scenario(const std::string& name) { return mpirun(3, std::string(NET_MPI_DRIVER) + " " + name, kBoundS); }

void expect_pass(const std::string& name) {
  MpiResult r = scenario(name);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("SCENARIO " + name + " PASS"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("SCENARIO " + name + " FAIL"), std::string::npos) << r.out;
}

TEST(NetMpi, RemoteTaskRoundTrip) { expect_pass("roundtrip"); }
TEST(NetMpi, DependenciesAcrossNodesIncludingOffsetOverlap) { expect_pass("deps"); }
// The same two with NetConfig::fast_paths off: no doorbells and no direct
// channels, the progress threads carry every message and park in slices
// (what ranks on other hosts do; one host cannot show it otherwise).
TEST(NetMpi, RemoteTaskRoundTripWithoutFastPaths) { expect_pass("roundtrip_sliced"); }
TEST(NetMpi, DependenciesAcrossNodesWithoutFastPaths) { expect_pass("deps_sliced"); }
TEST(NetMpi, FailingRemoteTaskChainsItsErrorAndTheNextRunSucceeds) { expect_pass("fail"); }
TEST(NetMpi, BadDescriptorsAreRejected) { expect_pass("bad_descriptors"); }
// The owner refuses a FETCH (the requester's receive was posted before it
// asked, and is cancelled); a good FETCH after it still gets its bytes.
// With doorbells every remote transfer there is direct (the caller drives
// its own MPI requests); the refusals, cancels and bytes are the same
// through the progress threads (_sliced: no doorbells, as between hosts).
TEST(NetMpi, RefusedFetchCancelsItsReceive) { expect_pass("refused_fetch"); }
TEST(NetMpi, RefusedFetchCancelsItsReceiveThroughTheProgressThreads) { expect_pass("refused_fetch_sliced"); }
TEST(NetMpi, ProtocolMismatchIsRejectedAtStartup) { expect_pass("protocol"); }
TEST(NetMpi, CallableTableMismatchIsRejectedAtStartup) { expect_pass("callables"); }
TEST(NetMpi, NodeInitFailureOnOneRankFailsEveryRank) { expect_pass("node_init"); }
// startup_timeout_ms = 6000 for the tree; rank 1's node hangs in its init.
TEST(NetMpi, OneStartupDeadlineForTheWholeTree) {
  MpiResult r = scenario("slow_node");
  EXPECT_NE(r.rc, 124) << "the job hung: " << r.out;
  EXPECT_NE(r.out.find("SCENARIO slow_node PASS"), std::string::npos) << r.out;
  EXPECT_LT(r.seconds, 30.0) << r.out;  // not the 30 s the hook sleeps
}

// SIGKILL of rank 2 mid-task: mpirun notices the dead process first and
// ends the whole job, naming the rank. Bounded well inside kBoundS.
TEST(NetMpi, KilledRankEndsTheJobNamingIt) {
  MpiResult r = scenario("kill");
  EXPECT_NE(r.rc, 0) << r.out;
  EXPECT_NE(r.rc, 124) << "the job hung: " << r.out;
  EXPECT_LT(r.seconds, 60.0) << r.out;
  EXPECT_NE(r.out.find("rank 2"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("PASS"), std::string::npos) << r.out;
}

// SIGSTOP of rank 2 mid-task: no process died, so only taskring's watchdog
// can notice (peer_timeout_ms = 1500 in the driver): the run fails naming
// the rank, and the job ends with MPI_Abort.
TEST(NetMpi, HungRankIsDeclaredLostAndTheJobEnds) {
  MpiResult r = scenario("stop");
  EXPECT_NE(r.rc, 0) << r.out;
  EXPECT_NE(r.rc, 124) << "the job hung: " << r.out;
  EXPECT_LT(r.seconds, 60.0) << r.out;
  EXPECT_NE(r.out.find("run after the lost rank: UNAVAILABLE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank 2 (pid"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ending the MPI job"), std::string::npos) << r.out;
}

}  // namespace
