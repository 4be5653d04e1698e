// The direct allreduce in segments through small window slots (one
// sequence number and one meeting per segment) or in one segment (after a
// slow hand-off probe), one thread per rank in one process: results bit for
// bit against the one-phase summation order for sizes of several segments
// that divide neither by the rank count nor by the segment length, FP32 /
// BF16 / FP16, in place; back to back with collectives that share its
// parity slots; across the wrap of the token counter; every rank taking
// rank 0's probe verdict; and the plan's arithmetic.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "local_comm_domain.hpp"
#include "taskring/kernels/comm.hpp"
#include "taskring/kernels/comm_kernels.hpp"
#include "taskring/kernels/tile_cast.hpp"
#include "test_scale.hpp"

namespace taskring::kernels {
namespace {

// The smallest size of at least `segs` segments on `n` ranks, plus `extra`.
uint64_t elems_for_segments(int n, uint64_t segs, uint64_t extra) {
  uint64_t m = static_cast<uint64_t>(n);
  while (direct_allreduce_segments(m, n) < segs) m += m / 8 + 1;
  return m + extra;
}

// Makes every rank's next direct allreduces skip the hand-off probe and run
// in segments (or, `whole`, in one), as a probe verdict would.
void force_direct_mode(LocalDomain& d, bool whole) {
  for (int r = 0; r < d.n(); ++r) {
    cm::SyncBlock& s = cm::sync_of(*d.ctx(r), r);
    s.direct_calls = 1;
    s.direct_whole = whole ? 1 : 0;
  }
}

float round_to(DataType dt, float v) {
  char tmp[4];
  tile::write_from_float(tmp, dt, v);
  return tile::read_as_float(tmp, dt);
}

// Runs allreduce(algo) on every rank over `m` elements of `dt` (in place
// when `in_place`) and checks every element of every rank against the sums
// in rank order, accumulated in FP32 and rounded once.
void check_allreduce(LocalDomain& d, uint64_t m, DataType dt, uint64_t algo, bool in_place, uint64_t off = 0) {
  const int n = d.n();
  const size_t es = element_size(dt);
  SCOPED_TRACE(std::to_string(n) + " ranks, " + std::to_string(m) + " x " + std::string(data_type_name(dt)) +
               (in_place ? ", in place" : ""));
  std::vector<std::vector<char>> in(n, std::vector<char>(m * es)), out(n, std::vector<char>(m * es));
  for (int r = 0; r < n; ++r)
    for (uint64_t i = 0; i < m; ++i)
      tile::write_from_float(in[r].data() + i * es, dt, static_cast<float>((r * 7 + static_cast<int>(i % 61)) % 23) *
                                                            0.375f - 3.0f + static_cast<float>(r) * 0.001f);
  std::vector<float> want(m);
  for (uint64_t i = 0; i < m; ++i) {
    float acc = tile::read_as_float(in[0].data() + i * es, dt);
    for (int q = 1; q < n; ++q) acc += tile::read_as_float(in[q].data() + i * es, dt);
    want[i] = round_to(dt, acc);
  }
  auto st = on_every_rank(n, [&](int r) -> Status {
    ChipTensor a = make_tensor_external(in[r].data(), {static_cast<uint32_t>(m)}, dt);
    ChipTensor b = in_place ? a : make_tensor_external(out[r].data(), {static_cast<uint32_t>(m)}, dt);
    return call(taskring_comm_allreduce, {a, b}, {d.ctx_scalar(r), algo, off});
  });
  for (int r = 0; r < n; ++r) {
    ASSERT_TRUE(st[r].ok()) << st[r].message();
    const char* got = in_place ? in[r].data() : out[r].data();
    uint64_t bad = 0, first = m;
    for (uint64_t i = 0; i < m; ++i) {
      const float g = tile::read_as_float(got + i * es, dt);
      if (std::memcmp(&g, &want[i], 4) != 0 && bad++ == 0) first = i;
    }
    ASSERT_EQ(bad, 0u) << "rank " << r << ": " << bad << " elements differ, first at " << first << " ("
                       << tile::read_as_float(got + first * es, dt) << ", want " << want[first] << ")";
  }
}

constexpr uint64_t kDirect = static_cast<uint64_t>(AllreduceAlgo::kDirect);
constexpr uint64_t kOnePhase = static_cast<uint64_t>(AllreduceAlgo::kOnePhase);

// Several segments, an odd size (not a multiple of the rank count nor of the
// segment length), each dtype, in place and not; 2, 3 and 5 ranks.
TEST(CommDirect, SegmentedAllreduceMatchesTheRankOrderSums) {
  const std::vector<int> ranks = taskring::testing::kSanitizedBuild ? std::vector<int>{2, 3} : std::vector<int>{2, 3, 5};
  for (int n : ranks) {
    const uint64_t m = elems_for_segments(n, 3, 2 * static_cast<uint64_t>(n) + 1);
    ASSERT_GE(direct_allreduce_segments(m, n), 3u);
    LocalDomain d(n, collective_scratch_bytes(CollectiveOp::kAllreduceDirect, m, 4, n));
    for (bool whole : {false, true})
      for (DataType dt : {DataType::FP32, DataType::BF16, DataType::FP16}) {
        SCOPED_TRACE(whole ? "in one segment" : "in segments");
        force_direct_mode(d, whole);
        check_allreduce(d, m, dt, kDirect, false);
        force_direct_mode(d, whole);
        check_allreduce(d, m, dt, kDirect, true);
      }
  }
}

// A direct allreduce's parity slots can have the stride of a one-phase one
// (then begin_collective sees the same layout and puts no barrier between
// them): the slots must still follow the sequence numbers' parity, or a rank
// that ran ahead stages its one-phase input over the reduced segment a peer
// still gathers. Each rank runs both back to back in one thread.
TEST(CommDirect, BackToBackWithACollectiveOfTheSameStrideStaysCorrect) {
  constexpr int kRanks = 3;
  const uint64_t m = elems_for_segments(kRanks, 2, 5);
  const uint64_t stride = direct_allreduce_plan(m, kRanks).slot_bytes;
  const uint64_t m1 = stride / 4;  // a one-phase allreduce of this size has the same stride
  ASSERT_EQ(collective_scratch_bytes(CollectiveOp::kAllreduceOnePhase, m1, 4, kRanks), 2 * stride);
  LocalDomain d(kRanks, 2 * stride);
  force_direct_mode(d, false);
  const int iters = taskring::testing::test_scale(100, 10, 400);
  const uint64_t len_max = std::max(m, m1);
  std::vector<std::vector<float>> in(kRanks, std::vector<float>(len_max)), out(kRanks, std::vector<float>(len_max));
  for (int r = 0; r < kRanks; ++r)
    for (uint64_t i = 0; i < len_max; ++i) in[r][i] = static_cast<float>(r * 100 + static_cast<int>(i % 89));
  std::vector<int> bad(kRanks, -1);
  auto st = on_every_rank(kRanks, [&](int r) -> Status {
    for (int it = 0; it < 2 * iters && bad[r] < 0; ++it) {
      const uint64_t len = it % 2 == 0 ? m : m1, algo = it % 2 == 0 ? kDirect : kOnePhase;
      ChipTensor a = make_tensor_external(in[r].data(), {static_cast<uint32_t>(len)});
      ChipTensor b = make_tensor_external(out[r].data(), {static_cast<uint32_t>(len)});
      TASKRING_RETURN_IF_ERROR(call(taskring_comm_allreduce, {a, b}, {d.ctx_scalar(r), algo, 0}));
      for (uint64_t i = 0; i < len && bad[r] < 0; ++i)
        if (out[r][i] != static_cast<float>(300 + kRanks * static_cast<int>(i % 89))) bad[r] = it;
    }
    return Status::Ok();
  });
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_TRUE(st[r].ok()) << st[r].message();
    EXPECT_EQ(bad[r], -1) << "rank " << r << " got a wrong sum in allreduce " << bad[r];
  }
}

// Across the wrap of the tokens (sequence 2^24): every rank starts just
// below it, so the segments of the allreduces run on both sides of it.
TEST(CommDirect, AllreducesAcrossTheTokenWrapStayCorrect) {
  constexpr int kRanks = 2;
  const uint64_t m = elems_for_segments(kRanks, 4, 3);
  LocalDomain d(kRanks, collective_scratch_bytes(CollectiveOp::kAllreduceDirect, m, 4, kRanks));
  // As if 2^24 - 6 collectives had run: every flag at the last one's token.
  constexpr uint32_t kStart = (1u << 24) - 6;
  for (int r = 0; r < kRanks; ++r) {
    cm::sync_of(*d.ctx(r), r).coll_seq = kStart;
    for (int q = 0; q < kRanks; ++q) cm::sync_of(*d.ctx(r), r).flags[q].store(cm::token(kStart, 2));
  }
  for (int it = 0; it < 4; ++it) {
    force_direct_mode(d, false);
    check_allreduce(d, m, DataType::FP32, kDirect, false);
  }
  EXPECT_LT(cm::sync_of(*d.ctx(0), 0).coll_seq, 1u << 25);
  EXPECT_GT(cm::sync_of(*d.ctx(0), 0).coll_seq, 1u << 24);
}

// A flag posted before the wrap does not satisfy a wait for a token after
// it: the wait runs into its deadline instead of passing at once.
TEST(CommDirect, AWaitForATokenPastTheWrapIgnoresOlderFlags) {
  LocalDomain d(2, 4096, /*timeout_ms=*/100);
  KernelLocalContext lc{};
  int64_t raw[TASKRING_KERNEL_ARG_SLOTS] = {};
  raw[TASKRING_KERNEL_ARG_LOCAL_CONTEXT] = reinterpret_cast<intptr_t>(&lc);
  KernelArgs k(raw, "probe");
  cm::SyncBlock& s0 = cm::sync_of(*d.ctx(0), 0);
  s0.flags[1].store(cm::token((1u << 24) - 1, 2));  // the last segment before the wrap
  const uint32_t after = cm::token(1u << 24, 1);     // wraps to 1
  EXPECT_FALSE(cm::wait_flags(k, *d.ctx(0), nullptr, 0, after, "wrap"));
  EXPECT_NE(std::string(lc.error_message).find("deadline"), std::string::npos) << lc.error_message;
  cm::post_flag(*d.ctx(1), 0, after);
  KernelLocalContext lc2{};
  raw[TASKRING_KERNEL_ARG_LOCAL_CONTEXT] = reinterpret_cast<intptr_t>(&lc2);
  KernelArgs k2(raw, "probe");
  EXPECT_TRUE(cm::wait_flags(k2, *d.ctx(0), nullptr, 0, after, "wrap")) << lc2.error_message;
}

// The hand-off probe (first call, then every kDirectProbeEvery-th): rank
// 0's verdict reaches every rank, so all run the same plan, and the sums
// stay right whichever it is.
TEST(CommDirect, EveryRankFollowsRankZerosProbe) {
  for (int n : {2, 3}) {
    const uint64_t m = elems_for_segments(n, 3, 1);
    LocalDomain d(n, collective_scratch_bytes(CollectiveOp::kAllreduceDirect, m, 4, n));
    for (uint32_t it = 0; it <= kDirectProbeEvery; ++it) {
      check_allreduce(d, m, DataType::FP32, kDirect, false);
      for (int r = 0; r < n; ++r) {
        const cm::SyncBlock& s = cm::sync_of(*d.ctx(r), r);
        EXPECT_EQ(s.direct_calls, it + 1);
        EXPECT_EQ(s.direct_whole, cm::sync_of(*d.ctx(0), 0).direct_verdict.load()) << "rank " << r;
      }
    }
  }
}

// One rank in segments: there is no peer to probe the hand-off with (the
// probe would read the window of a rank 1 that does not exist).
TEST(CommDirect, OneRankInSegmentsNeedsNoProbe) {
  const uint64_t m = elems_for_segments(1, 3, 7);
  ASSERT_GE(direct_allreduce_segments(m, 1), 3u);
  LocalDomain d(1, collective_scratch_bytes(CollectiveOp::kAllreduceDirect, m, 4, 1), /*timeout_ms=*/2000);
  check_allreduce(d, m, DataType::FP32, kDirect, false);
  check_allreduce(d, m, DataType::BF16, kDirect, true);
}

// The plan covers every element with at most kMaxDirectSegments segments,
// and a direct-sized scratch always fits what kAuto runs (callers size the
// scratch of an auto allreduce as a direct one's).
TEST(CommDirect, ThePlanCoversTheChunksAndAutoFitsItsScratch) {
  for (int n : {1, 2, 3, 4, 7, 8, 64})
    for (uint64_t m : {uint64_t{1}, uint64_t{5}, uint64_t{2047}, uint64_t{2048}, uint64_t{2049}, uint64_t{1} << 16,
                       (uint64_t{1} << 20) + 3, uint64_t{1} << 22, uint64_t{3} << 26}) {
      SCOPED_TRACE(std::to_string(n) + " ranks, " + std::to_string(m) + " elements");
      const DirectAllreducePlan p = direct_allreduce_plan(m, n);
      const uint64_t chunk = (m + static_cast<uint64_t>(n) - 1) / static_cast<uint64_t>(n);
      EXPECT_GE(p.segs, 1u);
      EXPECT_LE(p.segs, kMaxDirectSegments);
      EXPECT_GE(p.sub_bytes * p.segs, chunk * 4);  // the longest segment fits a sub-slot
      EXPECT_EQ(p.sub_bytes % 64, 0u);
      const DirectAllreducePlan w = direct_allreduce_plan(m, n, true);
      EXPECT_EQ(w.segs, 1u);
      EXPECT_EQ(w.sub_bytes, (chunk * 4 + 63) / 64 * 64);
      EXPECT_EQ(p.slot_bytes, w.sub_bytes * static_cast<uint64_t>(n));  // one layout either way
      EXPECT_EQ(w.slot_bytes, p.slot_bytes);
      const AllreduceAlgo a = pick_allreduce(m, n);
      const CollectiveOp op = a == AllreduceAlgo::kOnePhase ? CollectiveOp::kAllreduceOnePhase
                                                            : CollectiveOp::kAllreduceDirect;
      EXPECT_GE(collective_scratch_bytes(CollectiveOp::kAllreduceDirect, m, 4, n),
                collective_scratch_bytes(op, m, 4, n));
    }
  EXPECT_EQ(direct_allreduce_plan(uint64_t{3} << 26, 2).segs, kMaxDirectSegments);  // 768 MiB: clamped
}

}  // namespace
}  // namespace taskring::kernels
