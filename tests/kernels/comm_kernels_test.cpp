// The comm kernels in one process: an in-memory domain (the layout a node
// maps), one thread per rank. Covers the primitives' argument checks (each
// a kernel error naming the rule), deadlines and aborts, and the
// collectives and MoE kernels' validation. Across processes:
// tests/node/comm_domain_test.cpp, collectives_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "taskring/base/clock.hpp"
#include "taskring/base/cpus.hpp"
#include "taskring/kernels/comm.hpp"
#include "taskring/kernels/comm_kernels.hpp"
#include "taskring/kernels/invoke.hpp"
#include "local_comm_domain.hpp"
#include "test_scale.hpp"

namespace taskring::kernels {
namespace {

namespace cm = comm;

TEST(CommKernels, ContextScalarIsChecked) {
  Status s = call(taskring_comm_probe, {}, {0, 0, 1});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("must be a CommContext"), std::string::npos) << s.message();
  uint64_t junk[64] = {};
  s = call(taskring_comm_probe, {}, {reinterpret_cast<uintptr_t>(junk), 0, 1});
  EXPECT_NE(s.message().find("not a CommContext of a live domain"), std::string::npos) << s.message();
}

TEST(CommKernels, BarrierAndAllreduceAcrossThreads) {
  constexpr int kRanks = 5;
  LocalDomain d(kRanks, 1 << 16);
  std::vector<std::vector<float>> in(kRanks, std::vector<float>(37)), out(kRanks, std::vector<float>(37));
  for (int r = 0; r < kRanks; ++r)
    for (int i = 0; i < 37; ++i) in[r][i] = static_cast<float>(r * 100 + i);
  auto st = on_every_rank(kRanks, [&](int r) -> Status {
    TASKRING_RETURN_IF_ERROR(call(taskring_comm_probe, {}, {d.ctx_scalar(r), 0, 3}));
    ChipTensor a = make_tensor_external(in[r].data(), {37}), b = make_tensor_external(out[r].data(), {37});
    for (uint64_t algo : {0, 1, 2, 3})
      TASKRING_RETURN_IF_ERROR(call(taskring_comm_allreduce, {a, b}, {d.ctx_scalar(r), algo, 0}));
    return Status::Ok();
  });
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_TRUE(st[r].ok()) << st[r].message();
    for (int i = 0; i < 37; ++i) EXPECT_EQ(out[r][i], static_cast<float>(1000 + 5 * i)) << r << " " << i;
  }
}

// In place (one tensor as input and output): direct reads a block of its own
// chunk before it writes that block, and stages every other chunk before it
// writes any output, so the sums are those of separate buffers. Several
// blocks per chunk (4096 floats each) and an odd size.
TEST(CommKernels, DirectAllreduceInPlaceMatchesSeparateBuffers) {
  for (int ranks : {2, 3}) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    constexpr uint32_t kN = 3 * 4096 * 3 + 17;
    LocalDomain d(ranks, 1 << 20);
    std::vector<std::vector<float>> buf(ranks, std::vector<float>(kN));
    for (int r = 0; r < ranks; ++r)
      for (uint32_t i = 0; i < kN; ++i) buf[r][i] = static_cast<float>(r * 1000 + static_cast<int>(i % 251)) * 0.25f;
    auto st = on_every_rank(ranks, [&](int r) -> Status {
      ChipTensor t = make_tensor_external(buf[r].data(), {kN});
      return call(taskring_comm_allreduce, {t, t}, {d.ctx_scalar(r), 2, 0});
    });
    for (int r = 0; r < ranks; ++r) {
      ASSERT_TRUE(st[r].ok()) << st[r].message();
      for (uint32_t i = 0; i < kN; ++i) {
        float want = 0.0f;
        for (int q = 0; q < ranks; ++q) want += static_cast<float>(q * 1000 + static_cast<int>(i % 251)) * 0.25f;
        ASSERT_EQ(buf[r][i], want) << "rank " << r << " element " << i;
      }
    }
  }
}

// Back-to-back collectives whose parity slots have other strides (other
// sizes, other algorithms) on one scratch buffer: without the barrier that
// begin_collective() puts between different layouts, a rank that ran ahead
// stages its next input over a slot a slower peer still reads (TSan saw it
// as a race; in Release, wrong sums).
TEST(CommKernels, CollectivesOfDifferentLayoutsOnOneScratchStayCorrect) {
  constexpr int kRanks = 4;
  const int iters = taskring::testing::test_scale(200, 40, 2000);
  const uint64_t sizes[3] = {20000, 12000, 3001};
  LocalDomain d(kRanks, 1 << 20);
  std::vector<std::vector<float>> in(kRanks, std::vector<float>(sizes[0])), out(kRanks, std::vector<float>(sizes[0]));
  for (int r = 0; r < kRanks; ++r)
    for (uint64_t i = 0; i < sizes[0]; ++i) in[r][i] = static_cast<float>(r * 100 + static_cast<int>(i % 97));
  std::vector<int> bad(kRanks, -1);
  auto st = on_every_rank(kRanks, [&](int r) -> Status {
    for (int it = 0; it < iters; ++it) {
      const uint64_t n = sizes[it % 3];
      const uint64_t algo = static_cast<uint64_t>(it % 2);  // one-phase (stride N), ring (stride 2N)
      ChipTensor a = make_tensor_external(in[r].data(), {static_cast<uint32_t>(n)});
      ChipTensor b = make_tensor_external(out[r].data(), {static_cast<uint32_t>(n)});
      TASKRING_RETURN_IF_ERROR(call(taskring_comm_allreduce, {a, b}, {d.ctx_scalar(r), algo, 0}));
      for (uint64_t i = 0; i < n; ++i)
        if (out[r][i] != static_cast<float>(600 + kRanks * static_cast<int>(i % 97))) {
          bad[r] = it;
          return Status::Ok();
        }
    }
    return Status::Ok();
  });
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_TRUE(st[r].ok()) << st[r].message();
    EXPECT_EQ(bad[r], -1) << "rank " << r << " got a wrong sum at iteration " << bad[r];
  }
}

TEST(CommKernels, AutoAllreducePicksByRanksAndSize) {
  using kernels::AllreduceAlgo;
  EXPECT_EQ(kernels::pick_allreduce(1 << 10, 2), AllreduceAlgo::kOnePhase);  // 2 ranks, 4 KiB: one meeting
  EXPECT_EQ(kernels::pick_allreduce(1 << 20, 2), AllreduceAlgo::kDirect);    // 2 ranks, 4 MiB: less traffic
  EXPECT_EQ(kernels::pick_allreduce(2 << 10, 8), AllreduceAlgo::kOnePhase);  // 8 KiB: one meeting
  EXPECT_EQ(kernels::pick_allreduce((2 << 10) + 1, 4), AllreduceAlgo::kDirect);
  EXPECT_EQ(kernels::pick_allreduce(16 << 10, 8), AllreduceAlgo::kDirect);  // 64 KiB: less traffic
  EXPECT_EQ(kernels::pick_allreduce(1 << 20, 8), AllreduceAlgo::kDirect);
}

// Waits until `parked` reaches `want` (bounded); what the wake tests below
// need before they post.
bool parked_reaches(const std::atomic<uint32_t>& parked, uint32_t want) {
  const Deadline d = Deadline::after_ms(10000);
  while (parked.load() < want && !d.expired()) std::this_thread::yield();
  return parked.load() >= want;
}

TEST(CommKernels, AFlagWaitIsRungOnceWhenItsLastSourcePosts) {
  LocalDomain d(4, 4096);
  KernelLocalContext lc{};
  int64_t raw[TASKRING_KERNEL_ARG_SLOTS] = {};
  raw[TASKRING_KERNEL_ARG_LOCAL_CONTEXT] = reinterpret_cast<intptr_t>(&lc);
  KernelArgs k(raw, "probe");
  cm::SyncBlock& s0 = cm::sync_of(*d.ctx(0), 0);
  bool ok = false;
  std::thread waiter([&] { ok = cm::wait_flags(k, *d.ctx(0), nullptr, 0, 5, "test"); });
  ASSERT_TRUE(parked_reaches(s0.bell.parked, 1));
  const uint32_t e0 = s0.bell.epoch.load();
  cm::post_flag(*d.ctx(1), 0, 5);
  cm::post_flag(*d.ctx(2), 0, 5);
  EXPECT_EQ(s0.bell.epoch.load(), e0) << "a post that leaves a source missing rang the waiter";
  cm::post_flag(*d.ctx(3), 0, 5);
  waiter.join();
  EXPECT_TRUE(ok) << lc.error_message;
  EXPECT_EQ(s0.bell.epoch.load(), e0 + 1);
  EXPECT_EQ(s0.want_mask.load(), 0u);  // the announcement is withdrawn
}

TEST(CommKernels, TheLastArriverWakesABarrierWithOneRing) {
  LocalDomain d(4, 4096);
  std::atomic<uint32_t>& parked = d.header()->bell.parked;
  std::vector<Status> st(3);
  std::vector<std::thread> th;
  for (int r = 0; r < 3; ++r)
    th.emplace_back([&, r] { st[r] = call(taskring_comm_probe, {}, {d.ctx_scalar(r), 0, 1}); });
  ASSERT_TRUE(parked_reaches(parked, 3));
  const uint32_t e0 = d.header()->bell.epoch.load();
  EXPECT_TRUE(call(taskring_comm_probe, {}, {d.ctx_scalar(3), 0, 1}).ok());
  for (auto& t : th) t.join();
  for (const Status& s : st) EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(d.header()->bell.epoch.load(), e0 + 1);
  EXPECT_EQ(d.header()->barrier_done.load(), 1u);
}

// The last arriver may complete a barrier between another rank's arrival and
// that rank's stale-header check; the check must not take that for a header
// that outlived the epochs (it did at stop 14-16: bench_comm failed within
// ~200 barriers on a 2-vCPU host).
TEST(CommKernels, BackToBackBarriersNeverLookStale) {
  const uint64_t barriers = static_cast<uint64_t>(taskring::testing::test_scale(20000, 3000, 200000));
  for (int n : {2, 3}) {
    LocalDomain d(n, 4096);
    auto st = on_every_rank(n, [&](int r) { return call(taskring_comm_probe, {}, {d.ctx_scalar(r), 0, barriers}); });
    for (int r = 0; r < n; ++r) ASSERT_TRUE(st[r].ok()) << n << " ranks, rank " << r << ": " << st[r].message();
    EXPECT_EQ(d.header()->barrier_done.load(), barriers);
    EXPECT_EQ(d.header()->barrier_arrivals.load(), barriers * static_cast<uint64_t>(n));
  }
}

// A header that does not match the ranks' epochs (a reused domain not reset)
// is a kernel error naming the barrier, never a barrier that passes without
// the others: ahead (already complete) or behind (arrivals of an older one).
TEST(CommKernels, AStaleBarrierHeaderIsAKernelError) {
  {
    LocalDomain d(2, 4096);
    d.header()->barrier_done.store(1);
    Status s = call(taskring_comm_probe, {}, {d.ctx_scalar(0), 0, 1});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("barrier 1 found stale state (0 arrivals, 1 done)"), std::string::npos) << s.message();
  }
  {
    LocalDomain d(2, 4096);
    d.header()->barrier_arrivals.store(2);  // barrier 1 already holds both arrivals
    Status s = call(taskring_comm_probe, {}, {d.ctx_scalar(1), 0, 1});
    EXPECT_NE(s.message().find("barrier 1 found stale state (2 arrivals, 0 done)"), std::string::npos) << s.message();
  }
  {
    // Both ranks passed 3 barriers, then the header alone was zeroed.
    LocalDomain d(2, 4096);
    auto st = on_every_rank(2, [&](int r) { return call(taskring_comm_probe, {}, {d.ctx_scalar(r), 0, 3}); });
    ASSERT_TRUE(st[0].ok() && st[1].ok());
    d.header()->barrier_arrivals.store(0);
    d.header()->barrier_done.store(0);
    Status s = call(taskring_comm_probe, {}, {d.ctx_scalar(0), 0, 1});
    EXPECT_NE(s.message().find("barrier 4 found stale state (0 arrivals, 0 done)"), std::string::npos) << s.message();
  }
}

TEST(CommKernels, BarrierDeadlineNamesTheMissingRanks) {
  LocalDomain d(4, 4096, 200);
  // Only ranks 0 and 2 arrive.
  auto st = on_every_rank(2, [&](int i) { return call(taskring_comm_probe, {}, {d.ctx_scalar(2 * i), 0, 1}); });
  for (const Status& s : st) {
    EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.message();
    EXPECT_NE(s.message().find("2 missing (ranks 1,3)"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("domain 'local'"), std::string::npos) << s.message();
  }
}

TEST(CommKernels, AbortEndsAWaitAtOnce) {
  LocalDomain d(2, 4096, 60000);
  std::thread aborter([&] {
    d.header()->abort.store(1);  // as the node's abort hook: the header's bell and every rank's
    cm::ring(d.header()->bell);
    cm::ring(cm::sync_of(*d.ctx(0), 0).bell);
  });
  Status s = call(taskring_comm_probe, {}, {d.ctx_scalar(0), 0, 1});
  aborter.join();
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.message();
  EXPECT_NE(s.message().find("aborted"), std::string::npos) << s.message();
}

TEST(CommKernels, WaitsYieldInsteadOfSpinningOnlyWhenRanksOutnumberTheCpus) {
  const int cpus = usable_cpus();
  LocalDomain fits(std::min(cpus, cm::kMaxRanks), 4096);
  EXPECT_EQ(fits.ctx(0)->spin, cm::kSpinChecks);
  EXPECT_EQ(fits.ctx(0)->yield_ns, 0u);
  if (cpus >= cm::kMaxRanks) GTEST_SKIP() << "no domain can outnumber " << cpus << " CPUs";
  LocalDomain over(cpus + 1, 4096);
  for (int r = 0; r < over.n(); ++r) {
    EXPECT_EQ(over.ctx(r)->spin, 0u);
    EXPECT_EQ(over.ctx(r)->yield_ns, cm::kYieldPollNs);
  }
}

TEST(CommKernels, AbortEndsAWaitInItsYieldPhase) {
  const int n = std::min(usable_cpus() + 1, cm::kMaxRanks);
  LocalDomain d(n, 4096, 60000);
  if (d.ctx(0)->yield_ns == 0) GTEST_SKIP() << "a domain of " << n << " ranks fits the CPUs";
  d.ctx(0)->yield_ns = 60'000'000'000ull;  // a yield phase as long as the deadline: only the abort can end it
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    d.header()->abort.store(1);
  });
  const uint64_t t0 = mono_ns();
  Status s = call(taskring_comm_probe, {}, {d.ctx_scalar(0), 0, 1});
  aborter.join();
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.message();
  EXPECT_NE(s.message().find("aborted"), std::string::npos) << s.message();
  EXPECT_LT(mono_ns() - t0, 10'000'000'000ull) << "the abort did not end the yield phase";
}

TEST(CommKernels, PrimitiveArgumentsAreChecked) {
  LocalDomain d(2, 4096);
  KernelLocalContext lc{};
  int64_t raw[TASKRING_KERNEL_ARG_SLOTS] = {};
  raw[TASKRING_KERNEL_ARG_LOCAL_CONTEXT] = reinterpret_cast<intptr_t>(&lc);
  KernelArgs k(raw, "probe");
  const cm::CommContext& c = *d.ctx(0);
  char buf[64] = {};
  auto expect_fail = [&](bool ok, const char* want) {
    EXPECT_FALSE(ok) << want;
    EXPECT_NE(std::string(lc.error_message).find(want), std::string::npos) << lc.error_message;
    lc.error_code = 0;
    lc.error_message[0] = 0;
  };
  expect_fail(cm::put(k, c, 2, 0, buf, 8), "peer 2 is not a rank");
  expect_fail(cm::put(k, c, 1, 4090, buf, 8), "exceeds the 4096 B window");
  expect_fail(cm::get(k, c, -1, buf, 0, 8), "peer -1 is not a rank");
  expect_fail(cm::notify(k, c, 1, 2, cm::NotifyOp::kAdd, 1), "not 4-byte aligned");
  expect_fail(cm::notify(k, c, 1, 0, static_cast<cm::NotifyOp>(7), 1), "op 7");
  expect_fail(cm::wait_signal(k, c, 0, static_cast<cm::Cmp>(9), 1), "comparison 9");
  // The peer's copy of an address: windows[peer] + (addr - windows[self]).
  char* mine = cm::window_of(c, 0) + 100;
  EXPECT_EQ(cm::peer_address(c, 1, mine), cm::window_of(c, 1) + 100);
  EXPECT_EQ(cm::peer_address(c, 1, buf), nullptr);
  // Notify then wait on the same rank's signal: set and add.
  ASSERT_TRUE(cm::notify(k, c, 0, 8, cm::NotifyOp::kSet, 5));
  ASSERT_TRUE(cm::notify(k, c, 0, 8, cm::NotifyOp::kAdd, 2));
  EXPECT_TRUE(cm::wait_signal(k, c, 8, cm::Cmp::kEq, 7));
  EXPECT_TRUE(cm::wait_signal(k, c, 8, cm::Cmp::kLt, 8));
}

TEST(CommKernels, CollectiveArgumentsAreChecked) {
  LocalDomain d(1, 4096);
  std::vector<float> a(8), b(9);
  ChipTensor ta = make_tensor_external(a.data(), {8}), tb = make_tensor_external(b.data(), {9}),
             tb8 = make_tensor_external(b.data(), {8});
  const uint64_t c = d.ctx_scalar(0);
  struct Case {
    Status s;
    const char* want;
  } cases[] = {
      {call(taskring_comm_allreduce, {ta, tb}, {c, 0, 0}), "out has 9 elements, in has 8"},
      {call(taskring_comm_allreduce, {ta, tb8}, {c, 4, 0}), "algorithm 4"},
      {call(taskring_comm_allreduce, {ta, tb8}, {c, 0, 8}), "not 64-byte aligned"},
      {call(taskring_comm_allreduce, {ta, tb8}, {c, 1, 4032}), "exceeds the 4096 B window"},
      {call(taskring_comm_allgather, {ta, tb}, {c, 0}), "out must be 1 x in"},
      {call(taskring_comm_broadcast, {ta}, {c, 1, 0}), "root 1 is not a rank"},
      {call(taskring_comm_all_to_all, {ta, tb}, {c, 0}), "same dtype and element count"},
  };
  for (auto& x : cases) {
    EXPECT_FALSE(x.s.ok()) << x.want;
    EXPECT_NE(x.s.message().find(x.want), std::string::npos) << x.s.message();
  }
  // One rank: every collective is the identity (or a copy).
  for (int i = 0; i < 8; ++i) a[i] = static_cast<float>(i) + 0.5f;
  ASSERT_TRUE(call(taskring_comm_allreduce, {ta, tb8}, {c, 1, 0}).ok());
  for (int i = 0; i < 8; ++i) EXPECT_EQ(b[i], a[i]);
}

TEST(CommKernels, MoeDispatchChecksRoutesAndCapacity) {
  constexpr int kRanks = 2, T = 3, D = 4, K = 2, E = 4, El = 2;
  LocalDomain d(kRanks, 1 << 16);
  // Every token of both ranks goes to expert 0 and 1 (rank 0): rank 0 gets 12 rows.
  auto run = [&](int cap, int32_t bad_id) {
    return on_every_rank(kRanks, [&, cap, bad_id](int r) -> Status {
      std::vector<float> x(T * D, 1.0f), w(T * K, 0.5f), rw(cap), ry(cap * D);
      std::vector<int32_t> ids(T * K), rm(cap * 3), rc(El);
      std::vector<float> rx(cap * D);
      for (int t = 0; t < T; ++t) ids[t * K] = 0, ids[t * K + 1] = 1;
      if (r == 0) ids[0] = bad_id;
      ChipTensor tx = make_tensor_external(x.data(), {T, D}),
                 ti = make_tensor_external(ids.data(), {T, K}, DataType::INT32),
                 tw = make_tensor_external(w.data(), {T, K}),
                 trx = make_tensor_external(rx.data(), {static_cast<uint32_t>(cap), D}),
                 trw = make_tensor_external(rw.data(), {static_cast<uint32_t>(cap)}),
                 trm = make_tensor_external(rm.data(), {static_cast<uint32_t>(cap), 3}, DataType::INT32),
                 trc = make_tensor_external(rc.data(), {El}, DataType::INT32);
      return call(taskring_comm_moe_dispatch, {tx, ti, tw, trx, trw, trm, trc},
                  {d.ctx_scalar(r), E, 0, 4096, 4096 + 4096, 4096 + 8192});
    });
  };
  auto st = run(8, 0);  // 12 rows for rank 0, capacity 8: the owner fails, rank 1 receives nothing
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0].code(), StatusCode::kOutOfRange) << st[0].message();
  EXPECT_NE(st[0].message().find("rank 0 receives 12 rows, more than the capacity 8"), std::string::npos)
      << st[0].message();
  EXPECT_TRUE(st[1].ok()) << st[1].message();
  ASSERT_TRUE(run(12, 0)[0].ok()) << "12 rows fit a capacity of 12";
}

// Every source owns a T·K-row staging region at each owner: a rank routing a
// different T is refused by the owners that hear from it.
TEST(CommKernels, MoeDispatchRejectsRanksWithDifferentTokenCounts) {
  constexpr int kRanks = 2, D = 4, K = 2, E = 4, El = 2, cap = 16;
  LocalDomain d(kRanks, 1 << 16);
  auto st = on_every_rank(kRanks, [&](int r) -> Status {
    const int T = r == 0 ? 3 : 2;
    std::vector<float> x(T * D, 1.0f), w(T * K, 0.5f), rw(cap), rx(cap * D);
    std::vector<int32_t> ids(T * K), rm(cap * 3), rc(El);
    for (int t = 0; t < T; ++t) ids[t * K] = 0, ids[t * K + 1] = 2;  // one row to each rank
    return call(
        taskring_comm_moe_dispatch,
        {make_tensor_external(x.data(), {static_cast<uint32_t>(T), D}),
         make_tensor_external(ids.data(), {static_cast<uint32_t>(T), K}, DataType::INT32),
         make_tensor_external(w.data(), {static_cast<uint32_t>(T), K}), make_tensor_external(rx.data(), {cap, D}),
         make_tensor_external(rw.data(), {cap}), make_tensor_external(rm.data(), {cap, 3}, DataType::INT32),
         make_tensor_external(rc.data(), {El}, DataType::INT32)},
        {d.ctx_scalar(r), E, 0, 4096, 4096 + 4096, 4096 + 8192});
  });
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0].code(), StatusCode::kInvalidArgument) << st[0].message();
  EXPECT_NE(st[0].message().find("rank 1 routed 2 tokens, this rank 3: every rank must pass the same T"),
            std::string::npos)
      << st[0].message();
  EXPECT_EQ(st[1].code(), StatusCode::kInvalidArgument) << st[1].message();
  EXPECT_NE(st[1].message().find("rank 0 routed 3 tokens, this rank 2"), std::string::npos) << st[1].message();
}

TEST(CommKernels, MoeDispatchRejectsAnExpertOutOfRange) {
  LocalDomain d(1, 1 << 16);
  std::vector<float> x(2), w(2), rw(4), rx(8);
  std::vector<int32_t> ids = {0, 9}, rm(12), rc(2);
  Status s = call(taskring_comm_moe_dispatch,
                  {make_tensor_external(x.data(), {1, 2}), make_tensor_external(ids.data(), {1, 2}, DataType::INT32),
                   make_tensor_external(w.data(), {1, 2}), make_tensor_external(rx.data(), {4, 2}),
                   make_tensor_external(rw.data(), {4}), make_tensor_external(rm.data(), {4, 3}, DataType::INT32),
                   make_tensor_external(rc.data(), {2}, DataType::INT32)},
                  {d.ctx_scalar(0), 2, 0, 1024, 2048, 3072});
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("topk_ids[0][1] = 9 outside 0..1"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace taskring::kernels
