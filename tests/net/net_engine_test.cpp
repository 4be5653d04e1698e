// The L3 engine configured as L4 (what NetWorker does on rank 0), over
// in-process fake endpoints: targets are ranks, tensors are remote keys
// checked by EngineConfig::check_tensor, and dependencies between remote
// ranges follow the L2 rules, overlapping ranges at different offsets
// included. No MPI runtime needed.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "buffer_table.hpp"
#include "node/dag/engine.hpp"
#include "node/dag/fake_endpoint.hpp"
#include "remote_key.hpp"
#include "taskring/log/logger.hpp"

namespace taskring::net {
namespace {

using node::FakeEndpoint;
using node::Orchestrator;
using node::Outcome;
using node::TaskPayload;

struct L4Harness {
  explicit L4Harness(int ranks) : mirror(1, 0) {
    mirror.record(BufferEntry{0, 0, 0, 1024});
    std::vector<std::unique_ptr<node::Endpoint>> eps;
    for (int r = 0; r < ranks; ++r) {
      auto f = std::make_unique<FakeEndpoint>("rank " + std::to_string(r), &bell, [](const TaskPayload& p) {
        return p.scalars.empty() ? std::optional<Outcome>(Outcome{}) : std::nullopt;  // a scalar: hold
      });
      fakes.push_back(f.get());
      eps.push_back(std::move(f));
    }
    node::EngineConfig ec;
    ec.chip_callables = {"step"};
    ec.host_visible = [](uint64_t, uint64_t) { return false; };
    ec.target_word = "rank";
    ec.span_family = "network";
    const int n = ranks;
    BufferTable* m = &mirror;
    ec.check_tensor = [n, m](const ChipTensor& t) -> Status {
      auto d = describe_remote(t);
      if (!d.ok()) return d.status();
      if (d->owner < 0 || d->owner >= n) return out_of_range("owner rank out of range");
      return m->check(*d).status();
    };
    engine = std::make_unique<node::Engine>(std::move(ec), std::move(eps),
                                            std::vector<std::unique_ptr<node::Endpoint>>{}, &bell);
    engine->start();
  }
  ChipTensor range(uint64_t off, uint64_t n) {
    const uint32_t shape = static_cast<uint32_t>(n / 4);
    return *make_remote_tensor(RemoteTensor{1, 0, 0, off, n}, 1024, std::span<const uint32_t>(&shape, 1),
                               DataType::FLOAT32);
  }
  static Status submit(Orchestrator& o, const ChipTensor& t, int rank, bool hold) {
    ChipTaskArgs a;
    a.add_inout(t);
    if (hold) a.add_scalar(uint64_t{1});
    return o.submit_next_level(0, a, rank);
  }
  static Status wait(const std::shared_ptr<node::RunState>& r) {
    Status w =
        r->waiter.wait([&] { return r->done.load(std::memory_order_acquire); }, Deadline::after_ms(10000), "run");
    return w.ok() ? r->status : w;
  }

  node::ShmBell bell;
  BufferTable mirror;
  std::vector<FakeEndpoint*> fakes;
  std::unique_ptr<node::Engine> engine;
};

TEST(NetEngine, OverlapAtAnotherOffsetWaitsDisjointDoesNot) {
  L4Harness h(3);
  auto run = h.engine->run_orchestration([&](Orchestrator& o) -> Status {
    TASKRING_RETURN_IF_ERROR(L4Harness::submit(o, h.range(0, 24), 2, true));    // held on rank 2
    TASKRING_RETURN_IF_ERROR(L4Harness::submit(o, h.range(16, 16), 0, false));  // overlaps [16, 24)
    return L4Harness::submit(o, h.range(32, 32), 1, false);                     // disjoint
  });
  ASSERT_TRUE(h.fakes[1]->wait_finished(1, Deadline::after_ms(10000)).ok());  // the disjoint one ran
  ASSERT_TRUE(h.fakes[2]->wait_started(1, Deadline::after_ms(10000)).ok());
  EXPECT_EQ(h.fakes[0]->started_count(), 0u) << "the overlapping task started before its producer finished";
  h.fakes[2]->finish();
  EXPECT_TRUE(L4Harness::wait(run).ok());
  EXPECT_EQ(h.fakes[0]->started_count(), 1u);
}

TEST(NetEngine, MessagesSayRankAndCheckTensorRejects) {
  L4Harness h(3);
  Status s = L4Harness::wait(
      h.engine->run_orchestration([&](Orchestrator& o) { return L4Harness::submit(o, h.range(0, 16), 5, false); }));
  EXPECT_NE(s.message().find("rank 5 is not in [0, 3)"), std::string::npos) << s.to_string();
  float host[4] = {};
  const uint32_t shape = 4;
  ChipTensor local = make_tensor_external(host, &shape, 1, DataType::FLOAT32);
  s = L4Harness::wait(
      h.engine->run_orchestration([&](Orchestrator& o) { return L4Harness::submit(o, local, 0, false); }));
  EXPECT_NE(s.message().find("not a remote tensor"), std::string::npos) << s.to_string();
  const uint32_t four = 4;
  ChipTensor stale = *make_remote_tensor(RemoteTensor{1, 0, 1, 0, 16}, 1024, std::span<const uint32_t>(&four, 1),
                                         DataType::FLOAT32);  // generation 1; the mirror holds 0
  s = L4Harness::wait(
      h.engine->run_orchestration([&](Orchestrator& o) { return L4Harness::submit(o, stale, 0, false); }));
  EXPECT_NE(s.message().find("generation"), std::string::npos) << s.to_string();
}

// A run's three span records (network.run.orch, .dispatch, .run) leave in
// one write(2): one write each cost an L4 remote task's round trip half its
// time (docs/l4.md). A SOCK_SEQPACKET socket keeps the writes apart.
TEST(NetEngine, ARunsSpansLeaveInOneWrite) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
  const log::Level level = log::threshold();
  log::set_threshold(log::Level::kTiming);
  const int fd = log::set_output_fd(sv[0]);
  Status s;
  {
    L4Harness h(2);
    s = L4Harness::wait(
        h.engine->run_orchestration([&](Orchestrator& o) { return L4Harness::submit(o, h.range(0, 16), 1, false); }));
  }
  log::set_output_fd(fd);
  log::set_threshold(level);
  ASSERT_TRUE(s.ok()) << s.to_string();
  std::vector<std::string> writes;  // those that carry a run's span
  char buf[8192];
  for (ssize_t n; (n = recv(sv[1], buf, sizeof buf, MSG_DONTWAIT)) > 0;) {
    std::string w(buf, static_cast<size_t>(n));
    if (w.find("name=network.run") != std::string::npos) writes.push_back(w);
  }
  close(sv[0]);
  close(sv[1]);
  ASSERT_EQ(writes.size(), 1u) << "the run's spans left in " << writes.size() << " writes";
  const std::string& w = writes[0];
  const size_t orch = w.find("name=network.run.orch "), dispatch = w.find("name=network.run.dispatch "),
               run = w.find("name=network.run ");
  ASSERT_NE(orch, std::string::npos) << w;
  ASSERT_NE(dispatch, std::string::npos) << w;
  ASSERT_NE(run, std::string::npos) << w;
  EXPECT_LT(orch, dispatch);
  EXPECT_LT(dispatch, run);
  EXPECT_EQ(std::count(w.begin(), w.end(), '\n'), 3) << "three whole records: " << w;
}

}  // namespace
}  // namespace taskring::net
