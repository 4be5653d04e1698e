// Collectives on real chip children against a single-process reference:
// allreduce (one-phase, ring), allgather, reduce_scatter, broadcast,
// all_to_all; FP32 and BF16; 2, 3, 4 and 8 ranks; sizes from 1 element to
// several MiB (odd ones included; the MiB sizes need TASKRING_SLOW_TESTS=1).
// The reference replays each algorithm's summation order in FP32, so every
// result is checked bit for bit, and every rank must agree.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "taskring/kernels/tile_cast.hpp"
#include "taskring/node/collectives.hpp"
#include "taskring/node/node_worker.hpp"
#include "test_scale.hpp"

namespace taskring::node {
namespace {

using kernels::AllreduceAlgo;
using kernels::CollectiveOp;

struct Buf {
  void* p = nullptr;
  ChipTensor t;
};

class Collectives {
 public:
  Collectives(NodeWorker& w, int n, uint64_t m, DataType dt) : w_(w), n_(n), m_(m), dt_(dt), es_(element_size(dt)) {}

  Buf make(uint64_t elems) {
    Buf b;
    b.p = *w_.alloc_shared(elems * es_);
    b.t = make_tensor_external(b.p, {static_cast<uint32_t>(elems)}, dt_);
    return b;
  }
  float at(const Buf& b, uint64_t i) const { return tile::read_as_float(static_cast<char*>(b.p) + i * es_, dt_); }
  void set(const Buf& b, uint64_t i, float v) const {
    tile::write_from_float(static_cast<char*>(b.p) + i * es_, dt_, v);
  }
  // The value the kernel stores for an FP32 accumulator.
  float round(float v) const {
    char tmp[4];
    tile::write_from_float(tmp, dt_, v);
    return tile::read_as_float(tmp, dt_);
  }

  NodeWorker& w_;
  int n_;
  uint64_t m_;
  DataType dt_;
  size_t es_;
};

uint64_t chunk_begin(uint64_t n, int ranks, int c) {
  return n * static_cast<uint64_t>(c) / static_cast<uint64_t>(ranks);
}

void run_case(NodeWorker& w, int comm, int n, uint64_t m, DataType dt, uint32_t seed) {
  SCOPED_TRACE("ranks " + std::to_string(n) + ", " + std::to_string(m) + " elements, " +
               std::string(data_type_name(dt)));
  Collectives c(w, n, m, dt);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  const uint64_t nm = m * static_cast<uint64_t>(n);
  std::vector<Buf> ar_in(n), ar1(n), ar2(n), ar3(n), ar4(n), ag_in(n), ag_out(n), rs_in(n), rs_out(n), bc(n), a2a_in(n),
      a2a_out(n);
  for (int r = 0; r < n; ++r) {
    ar_in[r] = c.make(m), ar1[r] = c.make(m), ar2[r] = c.make(m), ar3[r] = c.make(m), ar4[r] = c.make(m);
    ag_in[r] = c.make(m), ag_out[r] = c.make(nm);
    rs_in[r] = c.make(nm), rs_out[r] = c.make(m), bc[r] = c.make(m), a2a_in[r] = c.make(nm), a2a_out[r] = c.make(nm);
    for (uint64_t i = 0; i < m; ++i)
      c.set(ar_in[r], i, dist(rng)), c.set(ag_in[r], i, dist(rng)), c.set(bc[r], i, dist(rng));
    for (uint64_t i = 0; i < nm; ++i) c.set(rs_in[r], i, dist(rng)), c.set(a2a_in[r], i, dist(rng));
  }
  const int root = n - 1;
  std::vector<float> root_data(m);
  for (uint64_t i = 0; i < m; ++i) root_data[i] = c.at(bc[root], i);
  auto tensors = [](const std::vector<Buf>& v) {
    std::vector<ChipTensor> t;
    for (const Buf& b : v) t.push_back(b.t);
    return t;
  };
  uint64_t scratch = 0;
  for (CollectiveOp op : {CollectiveOp::kAllreduceOnePhase, CollectiveOp::kAllreduceRing,
                          CollectiveOp::kAllreduceDirect, CollectiveOp::kAllgather, CollectiveOp::kBroadcast})
    scratch = std::max(scratch, kernels::collective_scratch_bytes(op, m, c.es_, n));
  for (CollectiveOp op : {CollectiveOp::kReduceScatter, CollectiveOp::kAllToAll})
    scratch = std::max(scratch, kernels::collective_scratch_bytes(op, nm, c.es_, n));
  Status s = w.run([&](Orchestrator& o) -> Status {
    std::vector<int> chips(n);
    for (int r = 0; r < n; ++r) chips[r] = r;
    const DomainBufferSpec bufs[] = {{"scratch", scratch}};
    TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_domain("coll", chips, scratch, bufs));
    TASKRING_RETURN_IF_ERROR(
        submit_allreduce(o, comm, *d, tensors(ar_in), tensors(ar1), AllreduceAlgo::kOnePhase, "scratch"));
    TASKRING_RETURN_IF_ERROR(
        submit_allreduce(o, comm, *d, tensors(ar_in), tensors(ar2), AllreduceAlgo::kRing, "scratch"));
    TASKRING_RETURN_IF_ERROR(
        submit_allreduce(o, comm, *d, tensors(ar_in), tensors(ar3), AllreduceAlgo::kDirect, "scratch"));
    TASKRING_RETURN_IF_ERROR(
        submit_allreduce(o, comm, *d, tensors(ar_in), tensors(ar4), AllreduceAlgo::kAuto, "scratch"));
    TASKRING_RETURN_IF_ERROR(submit_allgather(o, comm, *d, tensors(ag_in), tensors(ag_out), "scratch"));
    TASKRING_RETURN_IF_ERROR(submit_reduce_scatter(o, comm, *d, tensors(rs_in), tensors(rs_out), "scratch"));
    TASKRING_RETURN_IF_ERROR(submit_broadcast(o, comm, *d, tensors(bc), root, "scratch"));
    return submit_all_to_all(o, comm, *d, tensors(a2a_in), tensors(a2a_out), "scratch");
  });
  ASSERT_TRUE(s.ok()) << s.message();
  int bad = 0;
  auto expect = [&](float got, float want, const char* what, int r, uint64_t i) {
    if (std::memcmp(&got, &want, 4) == 0 || bad >= 5) return;
    ++bad;
    ADD_FAILURE() << what << " rank " << r << " [" << i << "]: " << got << ", want " << want;
  };
  for (uint64_t i = 0; i < m; ++i) {
    float one = 0.0f;  // ranks 0..n-1
    for (int q = 0; q < n; ++q) one = q == 0 ? c.at(ar_in[0], i) : one + c.at(ar_in[q], i);
    int ch = 0;  // the ring's chunk of i, summed from rank ch around the ring
    while (!(i >= chunk_begin(m, n, ch) && i < chunk_begin(m, n, ch + 1))) ++ch;
    float ring = c.at(ar_in[ch], i);
    for (int k = 1; k < n; ++k) ring = ring + c.at(ar_in[(ch + k) % n], i);
    for (int r = 0; r < n; ++r) {
      expect(c.at(ar1[r], i), c.round(one), "allreduce one-phase", r, i);
      expect(c.at(ar2[r], i), c.round(ring), "allreduce ring", r, i);
      expect(c.at(ar3[r], i), c.round(one), "allreduce direct", r, i);
      expect(c.at(ar4[r], i), c.round(one), "allreduce auto", r, i);
      expect(c.at(bc[r], i), root_data[i], "broadcast", r, i);
    }
  }
  for (int r = 0; r < n; ++r)
    for (int q = 0; q < n; ++q)
      for (uint64_t i = 0; i < m; ++i) {
        expect(c.at(ag_out[r], q * m + i), c.at(ag_in[q], i), "allgather", r, q * m + i);
        expect(c.at(a2a_out[r], q * m + i), c.at(a2a_in[q], r * m + i), "all_to_all", r, q * m + i);
      }
  for (int r = 0; r < n; ++r)
    for (uint64_t i = 0; i < m; ++i) {
      float sum = c.at(rs_in[0], r * m + i);
      for (int q = 1; q < n; ++q) sum = sum + c.at(rs_in[q], r * m + i);
      expect(c.at(rs_out[r], i), c.round(sum), "reduce_scatter", r, i);
    }
}

class CollectivesTest : public ::testing::TestWithParam<int> {};

TEST_P(CollectivesTest, MatchTheSingleProcessReference) {
  const int n = GetParam();
  const bool slow = taskring::testing::slow_tests_enabled();
  // CI slice: odd sizes up to 64 KiB; the slow label adds several MiB.
  std::vector<uint64_t> sizes = {1, 7, 1001};
  if (!taskring::testing::kSanitizedBuild) sizes.push_back(16411);
  if (slow) sizes.insert(sizes.end(), {65537, 786433});
  // Shared memory is never returned before close: room for every case
  // (per rank 8·m + 4·n·m elements, FP32 then BF16, plus alignment).
  uint64_t heap = 1 << 20;
  const uint64_t un = static_cast<uint64_t>(n);
  for (uint64_t m : sizes) heap += un * (8 * m + 4 * un * m) * (4 + 2) + 2 * 10 * un * 64;
  NodeConfig cfg;
  cfg.chips = n;
  cfg.chip_threads = 1;
  cfg.heap_ring_bytes = 1 << 20;
  cfg.shared_bytes = heap;
  cfg.close_timeout_ms = 5000;
  NodeWorker w(cfg);
  const int comm = *w.register_chip(comm_call_callable());
  ASSERT_TRUE(w.init().ok());
  uint32_t seed = 1;
  for (uint64_t m : sizes)
    for (DataType dt : {DataType::FP32, DataType::BF16}) {
      run_case(w, comm, n, m, dt, seed++);
      if (HasFatalFailure()) return;
    }
}

// A direct allreduce large enough to run in several segments (CI-sized:
// two and three segments), against the one-phase order, bit for bit, with
// the input and the output one tensor on every rank (each segment must be
// staged before the same segment of the output is overwritten).
TEST(Collectives, DirectAllreduceInSegmentsMatchesTheReference) {
  for (const auto& [n, segs] : {std::pair{2, uint64_t{2}}, std::pair{3, uint64_t{3}}}) {
    // About the smallest size that gives `segs` segments, made odd.
    uint64_t m = static_cast<uint64_t>(n);
    while (kernels::direct_allreduce_segments(m, n) < segs) m += m / 16 + 1;
    m |= 1;
    ASSERT_EQ(kernels::direct_allreduce_segments(m, n), segs);
    SCOPED_TRACE("ranks " + std::to_string(n) + ", " + std::to_string(m) + " elements");
    NodeConfig cfg;
    cfg.chips = n;
    cfg.chip_threads = 1;
    cfg.heap_ring_bytes = 1 << 20;
    cfg.shared_bytes = (1 << 20) + static_cast<uint64_t>(n) * 2 * (m * 4 + 4096);
    cfg.close_timeout_ms = 5000;
    NodeWorker w(cfg);
    const int comm = *w.register_chip(comm_call_callable());
    ASSERT_TRUE(w.init().ok());
    Collectives c(w, n, m, DataType::FP32);
    std::vector<Buf> io(n);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    std::vector<float> want(m);
    std::vector<std::vector<float>> in(n, std::vector<float>(m));
    for (int r = 0; r < n; ++r) {
      io[r] = c.make(m);
      for (uint64_t i = 0; i < m; ++i) c.set(io[r], i, in[r][i] = dist(rng));
    }
    for (uint64_t i = 0; i < m; ++i) {
      want[i] = in[0][i];
      for (int q = 1; q < n; ++q) want[i] = want[i] + in[q][i];
    }
    Status s = w.run([&](Orchestrator& o) -> Status {
      std::vector<int> chips(n);
      for (int r = 0; r < n; ++r) chips[r] = r;
      const uint64_t scratch = kernels::collective_scratch_bytes(CollectiveOp::kAllreduceDirect, m, 4, n);
      const DomainBufferSpec bufs[] = {{"scratch", scratch}};
      TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_domain("segments", chips, scratch, bufs));
      std::vector<ChipTensor> t;
      for (const Buf& b : io) t.push_back(b.t);
      return submit_allreduce(o, comm, *d, t, t, AllreduceAlgo::kDirect, "scratch");
    });
    ASSERT_TRUE(s.ok()) << s.message();
    for (int r = 0; r < n; ++r) {
      uint64_t bad = 0, first = m;
      for (uint64_t i = 0; i < m; ++i) {
        const float got = c.at(io[r], i);
        if (std::memcmp(&got, &want[i], 4) != 0 && bad++ == 0) first = i;
      }
      EXPECT_EQ(bad, 0u) << "rank " << r << ": " << bad << " elements differ, first at " << first;
    }
    EXPECT_TRUE(w.close().ok());
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, CollectivesTest, ::testing::Values(2, 3, 4, 8));

}  // namespace
}  // namespace taskring::node
