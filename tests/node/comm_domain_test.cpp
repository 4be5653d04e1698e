// Comm domains on a real node: allocation (dense ranks, buffers,
// validation before anything is allocated), the kernel-side primitives
// across chip processes, and the failure modes: a rank failing
// mid-collective, a domain never released, a wait past its deadline, the
// window-zeroing race with more ranks than cores.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "node_test_util.hpp"
#include "taskring/kernels/comm_kernels.hpp"
#include "taskring/node/collectives.hpp"
#include "test_scale.hpp"

namespace taskring::node::testing {
namespace {

using kernels::ProbeOp;

std::unique_ptr<NodeWorker> make_comm_worker(int chips, uint64_t comm_timeout_ms = 20000, int domain_cache = 4) {
  NodeConfig cfg;
  cfg.domain_cache = domain_cache;
  cfg.chips = chips;
  cfg.chip_threads = 1;
  cfg.heap_ring_bytes = 1 << 20;
  cfg.shared_bytes = 4 << 20;
  cfg.close_timeout_ms = 2000;
  cfg.comm_timeout_ms = comm_timeout_ms;
  auto w = std::make_unique<NodeWorker>(cfg);
  EXPECT_EQ(*w->register_chip(comm_call_callable()), 0);
  EXPECT_EQ(*w->register_chip(gate_callable()), 1);
  return w;
}

std::vector<int> iota(int n) {
  std::vector<int> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

// A probe on every member of `d`.
Status probe(Orchestrator& o, const CommDomain& d, ProbeOp op, uint64_t arg) {
  std::vector<ChipTaskArgs> a(static_cast<size_t>(d.size()));
  for (auto& x : a) x.add_scalar(static_cast<uint64_t>(op)).add_scalar(arg);
  return submit_comm_group(o, 0, d, kernels::comm_id::kCommProbe, a);
}

// Lines of /proc/<pid>/maps naming a domain object.
int domain_mappings(int pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  int n = 0;
  for (std::string line; std::getline(maps, line);) n += line.find("taskring-domain") != std::string::npos;
  return n;
}

TEST(CommDomain, MembersGetDenseRanksContextsAndBuffers) {
  auto w = make_comm_worker(3);
  ASSERT_TRUE(w->init().ok());
  const int chips[] = {2, 0, 1};
  const DomainBufferSpec bufs[] = {{"a", 100}, {"b", 64}};
  Status s = w->run([&](Orchestrator& o) -> Status {
    TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_domain("dense", chips, 8192, bufs));
    EXPECT_EQ(d->size(), 3);
    EXPECT_EQ(d->chips(), std::vector<int>({2, 0, 1}));
    for (int r = 0; r < 3; ++r) {
      auto m = d->member(chips[r]);
      EXPECT_TRUE(m.ok());
      EXPECT_EQ(m->rank, r);
      EXPECT_EQ(m->size, 3);
      EXPECT_NE(m->device_ctx, 0u);
      EXPECT_GE(m->window_size, 8192u);
    }
    EXPECT_EQ(*d->buffer_offset("a"), 0u);
    EXPECT_EQ(*d->buffer_offset("b"), 128u);  // 64-aligned after a
    EXPECT_EQ(*d->buffer(0, "b"), d->member(0)->window_base + 128);
    EXPECT_EQ(d->buffer_offset("c").status().code(), StatusCode::kNotFound);
    EXPECT_EQ(w->live_domains(), 1);
    return probe(o, *d, ProbeOp::kBarrier, 3);
  });
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(w->live_domains(), 0);
}

TEST(CommDomain, NonMemberLookupIsNotFound) {
  auto w = make_comm_worker(3);
  ASSERT_TRUE(w->init().ok());
  const int chips[] = {0, 2};
  Status s = w->run([&](Orchestrator& o) -> Status {
    TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_domain("pair", chips, 4096));
    auto m = d->member(1);
    EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
    EXPECT_NE(m.status().message().find("not a member of comm domain 'pair'"), std::string::npos)
        << m.status().message();
    return Status::Ok();
  });
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(CommDomain, BadRequestsAreRejectedBeforeAnythingIsAllocated) {
  auto w = make_comm_worker(2);
  ASSERT_TRUE(w->init().ok());
  Status s = w->run([&](Orchestrator& o) -> Status {
    const int two[] = {0, 1}, dup[] = {0, 0}, far[] = {0, 5};
    std::vector<int> many(65, 0);
    for (int i = 0; i < 65; ++i) many[static_cast<size_t>(i)] = i;
    const DomainBufferSpec big[] = {{"x", 4096}, {"y", 1}};
    const DomainBufferSpec twice[] = {{"x", 8}, {"x", 8}};
    const DomainBufferSpec empty[] = {{"", 8}};
    const DomainBufferSpec zero[] = {{"z", 0}};
    struct Case {
      Expected<std::shared_ptr<CommDomain>> got;
      const char* want;
    } cases[] = {
        {o.allocate_domain("", two, 4096), "name must be"},
        {o.allocate_domain(std::string(40, 'n'), two, 4096), "name must be"},
        {o.allocate_domain("d", dup, 4096), "listed twice"},
        {o.allocate_domain("d", far, 4096), "chip 5 is not a chip of this node"},
        {o.allocate_domain("d", many, 4096), "65 members"},
        {o.allocate_domain("d", {}, 4096), "0 members"},
        {o.allocate_domain("d", two, 0), "window_size 0"},
        {o.allocate_domain("d", two, 4096, big), "need 4160 B"},
        {o.allocate_domain("d", two, 4096, twice), "buffer 'x' is listed twice"},
        {o.allocate_domain("d", two, 4096, empty), "empty name"},
        {o.allocate_domain("d", two, 4096, zero), "has 0 bytes"},
    };
    for (auto& c : cases) {
      EXPECT_FALSE(c.got.ok()) << c.want;
      if (!c.got.ok()) {
        EXPECT_NE(c.got.status().message().find(c.want), std::string::npos) << c.got.status().message();
      }
    }
    EXPECT_EQ(w->live_domains(), 0);
    for (int c = 0; c < 2; ++c) EXPECT_EQ(domain_mappings(w->chip_pid(c)), 0);
    return Status::Ok();
  });
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(CommDomain, PutAndGetTilesReachThePeerWindow) {
  constexpr int kRanks = 4;
  auto w = make_comm_worker(kRanks);
  ASSERT_TRUE(w->init().ok());
  std::vector<ChipTensor> in(kRanks), out(kRanks);
  std::vector<float*> outp(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    auto* i = static_cast<float*>(*w->alloc_shared(6 * 4));
    outp[r] = static_cast<float*>(*w->alloc_shared(6 * 4));
    for (int j = 0; j < 6; ++j) i[j] = static_cast<float>(100 * r + j);
    in[r] = make_tensor_external(i, {2, 3});
    out[r] = make_tensor_external(outp[r], {2, 3});
  }
  Status s = w->run([&](Orchestrator& o) -> Status {
    const auto chips = iota(kRanks);
    const DomainBufferSpec bufs[] = {{"tile", 24}};
    TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_domain("putget", chips, 4096, bufs));
    std::vector<ChipTaskArgs> a(kRanks);
    for (int r = 0; r < kRanks; ++r)
      a[r].add_input(in[r])
          .add_output(out[r])
          .add_scalar(static_cast<uint64_t>(ProbeOp::kPutGet))
          .add_scalar(*d->buffer_offset("tile"));
    return submit_comm_group(o, 0, *d, kernels::comm_id::kCommProbe, a);
  });
  ASSERT_TRUE(s.ok()) << s.message();
  for (int r = 0; r < kRanks; ++r) {
    const int left = (r + kRanks - 1) % kRanks;
    for (int j = 0; j < 6; ++j) EXPECT_EQ(outp[r][j], static_cast<float>(100 * left + j)) << "rank " << r;
  }
}

// Every rank signals every other rank as soon as it starts; a window zeroed
// after the publishing barrier could wipe an early signal and hang. More
// ranks than cores, repeated, each time with a fresh domain (no cache) and
// each time reusing the cached one (cleared by the node).
TEST(CommDomain, WindowZeroingRaceUnderOversubscription) {
  constexpr int kRanks = 8;
  const int repeats = taskring::testing::kSanitizedBuild ? 5 : 50;
  for (int cache : {0, 1}) {
    auto w = make_comm_worker(kRanks, 10000, cache);
    ASSERT_TRUE(w->init().ok());
    for (int i = 0; i < repeats; ++i) {
      Status s = w->run([&](Orchestrator& o) -> Status {
        const DomainBufferSpec bufs[] = {{"signal", 64}};
        TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_domain("race", iota(kRanks), 4096, bufs));
        return probe(o, *d, ProbeOp::kRingNotify, *d->buffer_offset("signal"));
      });
      ASSERT_TRUE(s.ok()) << "domain_cache " << cache << ", repeat " << i << ": " << s.message();
    }
    EXPECT_EQ(w->live_domains(), 0);
    EXPECT_EQ(w->cached_domains(), cache);
  }
}

TEST(CommDomain, RankFailingMidCollectiveFailsTheRunNamingItAndPeersDoNotHang) {
  constexpr int kRanks = 4;
  // Peers would wait 60 s for the failed rank; the abort must end them long
  // before the 30 s this test waits for the run.
  auto w = make_comm_worker(kRanks, 60000);
  ASSERT_TRUE(w->init().ok());
  RunHandle h = w->submit([&](Orchestrator& o) -> Status {
    TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_domain("failing", iota(kRanks), 4096));
    return probe(o, *d, ProbeOp::kFailOnRank, 2);
  });
  Status s = h.wait(Deadline::after_ms(30000));
  ASSERT_FALSE(s.ok());
  ASSERT_NE(s.code(), StatusCode::kDeadlineExceeded) << "peers hung: " << s.message();
  EXPECT_NE(s.message().find("rank 2 fails on purpose"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("chip 2"), std::string::npos) << s.message();
  EXPECT_EQ(w->live_domains(), 0);
  for (int c = 0; c < kRanks; ++c) EXPECT_EQ(domain_mappings(w->chip_pid(c)), 0) << "chip " << c;
  // The next run works.
  s = w->run([&](Orchestrator& o) -> Status {
    TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_domain("after", iota(kRanks), 4096));
    return probe(o, *d, ProbeOp::kBarrier, 2);
  });
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(CommDomain, NeverReleasedDomainIsSweptAfterTheFence) {
  auto w = make_comm_worker(2, 20000, /*domain_cache=*/0);
  ASSERT_TRUE(w->init().ok());
  std::shared_ptr<CommDomain> handles[2];
  Status s = w->run([&](Orchestrator& o) -> Status {
    TASKRING_ASSIGN_OR_RETURN(auto kept, o.allocate_domain("kept", iota(2), 4096));
    TASKRING_ASSIGN_OR_RETURN(auto gone, o.allocate_domain("released", iota(2), 4096));
    gone->release();
    handles[0] = kept;
    handles[1] = gone;
    EXPECT_FALSE(kept->swept() || gone->swept());
    EXPECT_EQ(w->live_domains(), 2);
    for (int c = 0; c < 2; ++c) EXPECT_EQ(domain_mappings(w->chip_pid(c)), 2);
    return probe(o, *kept, ProbeOp::kBarrier, 1);
  });
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(handles[0]->swept() && handles[1]->swept());
  EXPECT_EQ(w->live_domains(), 0);
  for (int c = 0; c < 2; ++c) EXPECT_EQ(domain_mappings(w->chip_pid(c)), 0) << "chip " << c;
}

// The domain cache (NodeConfig::domain_cache): a passed run's domain stays
// mapped and the next allocation of the same chips and size reuses it,
// with every window zeroed again and the kernel barrier starting afresh
// (a stale barrier counter is a kernel error, never a barrier that passes
// without the others).
TEST(CommDomainCache, SameShapeReusesTheKeptDomainZeroedAndWithAFreshBarrier) {
  auto w = make_comm_worker(3);
  ASSERT_TRUE(w->init().ok());
  std::vector<uint64_t> bases;
  for (int i = 0; i < 3; ++i) {
    Status s = w->run([&](Orchestrator& o) -> Status {
      TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_domain("kept" + std::to_string(i), iota(3), 4096));
      bases.push_back(d->member(0)->window_base);
      TASKRING_RETURN_IF_ERROR(probe(o, *d, ProbeOp::kCheckZeroThenDirty, 0));
      return probe(o, *d, ProbeOp::kBarrier, 3);
    });
    ASSERT_TRUE(s.ok()) << "run " << i << ": " << s.message();
    EXPECT_EQ(w->live_domains(), 0);
    EXPECT_EQ(w->cached_domains(), 1);
    for (int c = 0; c < 3; ++c) EXPECT_EQ(domain_mappings(w->chip_pid(c)), 1) << "run " << i << ", chip " << c;
  }
  EXPECT_EQ(bases[1], bases[0]);  // the same mapping, reused
  EXPECT_EQ(bases[2], bases[0]);
}

TEST(CommDomainCache, OtherChipsOrSizesGetTheirOwnDomainAndTheCacheIsBounded) {
  auto w = make_comm_worker(3, 20000, /*domain_cache=*/2);
  ASSERT_TRUE(w->init().ok());
  const int reversed[] = {2, 1, 0};
  Status s = w->run([&](Orchestrator& o) -> Status {
    TASKRING_ASSIGN_OR_RETURN(auto a, o.allocate_domain("a", iota(3), 4096));
    TASKRING_ASSIGN_OR_RETURN(auto b, o.allocate_domain("b", reversed, 4096));
    TASKRING_ASSIGN_OR_RETURN(auto c, o.allocate_domain("c", iota(3), 8192));
    for (const auto* d : {a.get(), b.get(), c.get()})
      TASKRING_RETURN_IF_ERROR(probe(o, *d, ProbeOp::kCheckZeroThenDirty, 0));
    return Status::Ok();
  });
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(w->cached_domains(), 2);  // the oldest was evicted and unmapped
  for (int c = 0; c < 3; ++c) EXPECT_EQ(domain_mappings(w->chip_pid(c)), 2) << "chip " << c;
  // Reversed chips are other ranks: that domain is reused, not "a"'s.
  s = w->run([&](Orchestrator& o) -> Status {
    TASKRING_ASSIGN_OR_RETURN(auto b, o.allocate_domain("b2", reversed, 4096));
    EXPECT_EQ(b->member(2)->rank, 0);
    return probe(o, *b, ProbeOp::kCheckZeroThenDirty, 0);
  });
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(w->cached_domains(), 2);
  for (int c = 0; c < 3; ++c) EXPECT_EQ(domain_mappings(w->chip_pid(c)), 2) << "chip " << c;
}

TEST(CommDomainCache, AFailedRunEmptiesTheCacheAndTheNextRunWorks) {
  auto w = make_comm_worker(3);
  ASSERT_TRUE(w->init().ok());
  Status s = w->run([&](Orchestrator& o) -> Status {
    TASKRING_ASSIGN_OR_RETURN(auto a, o.allocate_domain("a", iota(3), 4096));
    TASKRING_ASSIGN_OR_RETURN(auto b, o.allocate_domain("b", iota(2), 4096));
    TASKRING_RETURN_IF_ERROR(probe(o, *b, ProbeOp::kBarrier, 1));
    return probe(o, *a, ProbeOp::kBarrier, 1);
  });
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(w->cached_domains(), 2);
  // This run reuses "a" and fails: neither it nor the untouched "b" stays.
  s = w->run([&](Orchestrator& o) -> Status {
    TASKRING_ASSIGN_OR_RETURN(auto a, o.allocate_domain("a", iota(3), 4096));
    return probe(o, *a, ProbeOp::kFailOnRank, 1);
  });
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("rank 1 fails on purpose"), std::string::npos) << s.message();
  EXPECT_EQ(w->live_domains(), 0);
  EXPECT_EQ(w->cached_domains(), 0);
  for (int c = 0; c < 3; ++c) EXPECT_EQ(domain_mappings(w->chip_pid(c)), 0) << "chip " << c;
  s = w->run([&](Orchestrator& o) -> Status {
    TASKRING_ASSIGN_OR_RETURN(auto a, o.allocate_domain("a", iota(3), 4096));
    TASKRING_RETURN_IF_ERROR(probe(o, *a, ProbeOp::kCheckZeroThenDirty, 0));
    return probe(o, *a, ProbeOp::kBarrier, 2);
  });
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(w->cached_domains(), 1);
}

TEST(CommDomainCache, ASizeOutsideItsRangeFailsInitNamingIt) {
  for (int bad : {-1, 65}) {
    NodeConfig cfg;
    cfg.chips = 1;
    cfg.domain_cache = bad;
    NodeWorker w(cfg);
    Status s = w.init();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
    EXPECT_NE(s.message().find("domain_cache " + std::to_string(bad) + " not in [0, 64]"), std::string::npos)
        << s.message();
  }
}

TEST(CommDomain, WaitPastItsDeadlineIsAKernelErrorNamingTheDomain) {
  auto w = make_comm_worker(2, 300);
  ASSERT_TRUE(w->init().ok());
  Status s = w->run([&](Orchestrator& o) -> Status {
    const DomainBufferSpec bufs[] = {{"never", 64}};
    TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_domain("stuck", iota(2), 4096, bufs));
    return probe(o, *d, ProbeOp::kWaitForever, *d->buffer_offset("never"));
  });
  ASSERT_FALSE(s.ok());
  // TASKRING_KERNEL_ERR_DEADLINE, reported by the chip as a kernel failure.
  EXPECT_NE(s.message().find("failed with code 4"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("domain 'stuck' rank"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("deadline of 300 ms"), std::string::npos) << s.message();
  EXPECT_EQ(w->live_domains(), 0);
}

// A member busy with a long task cannot serve its attach request: the
// others' allocation barrier fails naming it.
TEST(CommDomain, AllocationBarrierDeadlineNamesTheMissingRanks) {
  auto w = make_comm_worker(3, 400);
  ASSERT_TRUE(w->init().ok());
  std::thread resume;
  Status s = w->run([&](Orchestrator& o) -> Status {
    // Chip 2 is stopped (a stalled chip process) until the others' 400 ms
    // allocation barrier has expired; it arrives after they left.
    const int chip2 = w->chip_pid(2);
    EXPECT_EQ(kill(chip2, SIGSTOP), 0);
    resume = std::thread([chip2] {
      std::this_thread::sleep_for(std::chrono::milliseconds(800));
      kill(chip2, SIGCONT);
    });
    auto d = o.allocate_domain("late", iota(3), 4096);
    EXPECT_FALSE(d.ok());
    if (!d.ok()) {
      EXPECT_NE(d.status().message().find("comm domain 'late'"), std::string::npos) << d.status().message();
      EXPECT_NE(d.status().message().find("missing ranks 2"), std::string::npos) << d.status().message();
    }
    return Status::Ok();
  });
  resume.join();
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(w->live_domains(), 0);
  for (int c = 0; c < 3; ++c) EXPECT_EQ(domain_mappings(w->chip_pid(c)), 0) << "chip " << c;
}

// A member chip serves its attach only between two tasks, so allocate_domain
// first lets the run's earlier tasks finish: here a task that holds chip 2
// until a thread opens its gate, 700 ms later, past the others' 400 ms
// allocation barrier.
TEST(CommDomain, AllocationWaitsForTheRunsEarlierTasks) {
  auto w = make_comm_worker(3, 400);
  ASSERT_TRUE(w->init().ok());
  Gate* g = new (*w->alloc_shared(sizeof(Gate))) Gate();
  std::thread opener;
  Status s = w->run([&](Orchestrator& o) -> Status {
    ChipTaskArgs hold;
    hold.add_scalar(reinterpret_cast<uintptr_t>(g));
    TASKRING_RETURN_IF_ERROR(o.submit_next_level(1, hold, 2));
    EXPECT_TRUE(wait_started(g, 1).ok());
    opener = std::thread([g] {
      std::this_thread::sleep_for(std::chrono::milliseconds(700));
      open_gate(g);
    });
    const uint64_t t0 = mono_ns();
    TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_domain("after", iota(3), 4096));
    EXPECT_GE(mono_ns() - t0, 600'000'000u);  // it waited for the held task
    return probe(o, *d, ProbeOp::kBarrier, 2);
  });
  opener.join();
  EXPECT_TRUE(s.ok()) << s.message();
}

// The deadlock the wait prevents: an earlier collective over chips {0, 1}
// still in flight when a new domain over {1, 0} is allocated. Without the
// wait, a member that took the attach first parked at the allocation
// barrier while its peer waited in the collective for it, until a deadline.
TEST(CommDomain, AllocatingWhileACollectiveRunsNeverDeadlocks) {
  auto w = make_comm_worker(2, 2000, /*domain_cache=*/0);
  ASSERT_TRUE(w->init().ok());
  for (int i = 0; i < taskring::testing::test_scale(10, 4, 100); ++i) {
    Status s = w->run([&](Orchestrator& o) -> Status {
      const int ab[] = {0, 1}, ba[] = {1, 0};
      TASKRING_ASSIGN_OR_RETURN(auto first, o.allocate_domain("first", ab, 4096));
      TASKRING_RETURN_IF_ERROR(probe(o, *first, ProbeOp::kBarrier, 50));
      TASKRING_ASSIGN_OR_RETURN(auto second, o.allocate_domain("second", ba, 4096));
      return probe(o, *second, ProbeOp::kBarrier, 50);
    });
    ASSERT_TRUE(s.ok()) << "run " << i << ": " << s.message();  // a deadlock ends in the 2 s deadline
  }
}

// close() while kernels of a domain wait (for 60 s): the abort ends them,
// the run resolves with an error, close() completes.
TEST(CommDomain, CloseDuringAWaitingCollectiveResolvesTheRun) {
  auto w = make_comm_worker(2, 60000);
  ASSERT_TRUE(w->init().ok());
  RunHandle h = w->submit([&](Orchestrator& o) -> Status {
    const DomainBufferSpec bufs[] = {{"never", 64}};
    TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_domain("closing", iota(2), 4096, bufs));
    return probe(o, *d, ProbeOp::kWaitForever, *d->buffer_offset("never"));
  });
  EXPECT_TRUE(w->close().ok());
  Status s = h.wait(Deadline::after_ms(20000));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.code(), StatusCode::kDeadlineExceeded) << s.message();
  EXPECT_EQ(w->live_domains(), 0);
}

TEST(CommDomain, SubmitHelpersValidateTheirArguments) {
  auto w = make_comm_worker(2);
  ASSERT_TRUE(w->init().ok());
  float* mem = static_cast<float*>(*w->alloc_shared(4 * (64 + 2 * 1100)));
  const ChipTensor a = make_tensor_external(mem, {16}), b = make_tensor_external(mem + 16, {16});
  const ChipTensor c = make_tensor_external(mem + 32, {8});
  Status s = w->run([&](Orchestrator& o) -> Status {
    const DomainBufferSpec bufs[] = {{"small", 64}};
    TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_domain("helpers", iota(2), 4096, bufs));
    const ChipTensor one[] = {a}, two_in[] = {a, c}, two_out[] = {b, b};
    struct Case {
      Status s;
      const char* want;
    } cases[] = {
        {submit_allreduce(o, 0, *d, one, one, kernels::AllreduceAlgo::kRing, "small"),
         "1 per-rank entries for the 2 ranks"},
        {submit_allreduce(o, 0, *d, two_in, two_out, kernels::AllreduceAlgo::kRing, "nope"), "no buffer named 'nope'"},
        {submit_allreduce(o, 0, *d, two_out, two_out, static_cast<kernels::AllreduceAlgo>(9), "small"),
         "algorithm 9 is not one of"},
        {submit_allgather(o, 0, *d, two_in, two_out, "small"), "rank 1's input has 8 elements, rank 0's 16"},
        {submit_broadcast(o, 0, *d, two_out, 2, "small"), "root 2 is not a rank"},
        {submit_moe_step(o, 0, *d, {}, MoeShape{}, false), "0 per-rank entries"},
    };
    for (auto& x : cases) {
      EXPECT_FALSE(x.s.ok()) << x.want;
      EXPECT_NE(x.s.message().find(x.want), std::string::npos) << x.s.message();
    }
    // A scratch buffer too small for the collective: named, with the need.
    const DomainBufferSpec tiny[] = {{"tiny", 64}};
    TASKRING_ASSIGN_OR_RETURN(auto t, o.allocate_domain("tiny", iota(2), 64, tiny));
    const ChipTensor x = make_tensor_external(mem + 64, {1100}), y = make_tensor_external(mem + 64 + 1100, {1100});
    const ChipTensor ins[] = {x, y}, outs[] = {y, x};
    Status e = submit_allreduce(o, 0, *t, ins, outs, kernels::AllreduceAlgo::kRing, "tiny");
    EXPECT_NE(e.message().find("scratch buffer 'tiny'"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("needs 17664"), std::string::npos) << e.message();
    return Status::Ok();
  });
  EXPECT_TRUE(s.ok()) << s.message();
}

}  // namespace
}  // namespace taskring::node::testing

namespace taskring::node {
namespace {

// Domains spanning nodes need the L4 worker's transport (docs/l4.md); a
// node of its own refuses them, naming the alternative.
TEST(CommDomain, GlobalDomainOutsideAnL4WorkerIsUnimplemented) {
  NodeConfig cfg;
  cfg.chips = 1;
  cfg.sub_workers = 0;
  NodeWorker w(cfg);
  ASSERT_TRUE(w.init().ok());
  Status s = w.run([&](Orchestrator& o) -> Status {
    const GlobalMember members[] = {{0, 0}};
    return o.allocate_global_domain("g", members, 4096).status();
  });
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << s.message();
  EXPECT_NE(s.message().find("allocate_global_domain('g'): this node is not part of an L4 worker"), std::string::npos)
      << s.message();
  EXPECT_TRUE(w.close().ok());
}

}  // namespace
}  // namespace taskring::node
