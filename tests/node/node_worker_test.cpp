// NodeWorker with real forked children: computation through chips and SUB
// workers, and the failure modes of docs/node.md (each bounded by a
// deadline; none sleeps to synchronise).
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <thread>

#include "chip_placement.hpp"
#include "node_test_util.hpp"
#include "taskring/base/cpus.hpp"
#include "thread_count.hpp"

namespace taskring::node::testing {
namespace {

using TA = TensorArgType;
constexpr int kAddScalar = 0, kGateChip = 1;
constexpr int kSum = 0, kFail = 1, kGateSub = 2, kCount = 3;

std::unique_ptr<NodeWorker> make_worker(int chips, int subs, NodeConfig cfg = {}) {
  auto w = std::make_unique<NodeWorker>(small_node(chips, subs, cfg));
  EXPECT_EQ(*w->register_chip(add_scalar_callable()), kAddScalar);
  EXPECT_EQ(*w->register_chip(gate_callable()), kGateChip);
  EXPECT_EQ(*w->register_sub("sum",
                             [](const ChipTaskArgs& a) {
                               const ChipTensor& y = *a.tensor(0);
                               float* z = a.tensor(1)->data<float>();
                               const uint32_t n = y.shapes[1];
                               const float* yp = y.data<float>();
                               for (uint32_t i = 0; i < n; ++i) z[i] = yp[i] + yp[n + i];
                               return Status::Ok();
                             }),
            kSum);
  EXPECT_EQ(*w->register_sub("fail", [](const ChipTaskArgs&) { return internal_error("injected SUB failure"); }),
            kFail);
  EXPECT_EQ(*w->register_sub("gate", [](const ChipTaskArgs& a) { return gate_pass(gate_at(a.scalar(0))); }), kGateSub);
  EXPECT_EQ(*w->register_sub("count",
                             [](const ChipTaskArgs& a) {
                               gate_at(a.scalar(0))->ran.fetch_add(1);
                               return Status::Ok();
                             }),
            kCount);
  return w;
}

Gate* new_gate(NodeWorker& w) { return new (*w.alloc_shared(sizeof(Gate))) Gate(); }

uint64_t addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

TEST(NodeWorker, ChipsAndSubComputeThroughAnInferredEdge) {
  auto w = make_worker(2, 1);
  {
    Status init_status = w->init();
    ASSERT_TRUE(init_status.ok()) << init_status.to_string();
  }
  const uint32_t n = 256;
  float* x = static_cast<float*>(*w->alloc_shared(n * 4));
  for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  ChipTensor X = make_tensor_external(x, {1, n});
  ChipTensor Y = make_tensor_external(*w->alloc_shared(2 * n * 4), {2, n});
  ChipTensor Z = make_tensor_external(*w->alloc_shared(n * 4), {1, n});
  for (int round = 0; round < 3; ++round) {
    RunHandle h = w->submit([&](Orchestrator& o) -> Status {
      for (int c = 0; c < 2; ++c) {
        ChipTensor yc = Y.view({1, n}, {static_cast<uint32_t>(c), 0});
        ChipTaskArgs a;
        a.add_input(X).add_output(yc).add_scalar(f32_bits(1.0f + c + round));
        TASKRING_RETURN_IF_ERROR(o.submit_next_level(kAddScalar, a, c));
      }
      ChipTaskArgs s;
      s.add_input(Y).add_output(Z);  // RAW on both rows of Y: waits for both chips
      return o.submit_sub(kSum, s);
    });
    Status st = h.wait(Deadline::after_ms(30000));
    ASSERT_TRUE(st.ok()) << st.to_string();
    EXPECT_EQ(h.counts().completed, 3u);
    const float* z = Z.data<float>();
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(z[i], 2.0f * x[i] + 3.0f + 2.0f * round) << i;
  }
  EXPECT_TRUE(w->close().ok());
}

// Children that outnumber the CPUs (with the parent) yield a contended CPU
// to it: they run 3 nice levels below the parent; children that fit keep
// its level. Expectations follow this machine's CPUs (spin_budget).
TEST(NodeWorker, ChildrenThatOutnumberTheCpusRunBelowTheParent) {
  errno = 0;
  const int parent = getpriority(PRIO_PROCESS, 0);
  ASSERT_EQ(errno, 0);
  for (int chips : {1, usable_cpus() + 1}) {
    auto w = make_worker(chips, 0);
    ASSERT_TRUE(w->init().ok()) << chips << " chips";
    const bool oversubscribed = spin_budget(1, chips + 1) == 0;
    for (int c = 0; c < chips; ++c) {
      errno = 0;
      const int nice = getpriority(PRIO_PROCESS, w->chip_pid(c));
      ASSERT_EQ(errno, 0) << "chip " << c;
      EXPECT_EQ(nice, oversubscribed ? std::min(parent + 3, 19) : parent) << chips << " chips, chip " << c;
    }
    EXPECT_TRUE(w->close().ok());
  }
}

// A copy_from after submits waits for them: the chip serves control calls
// between tasks, and without the wait this one would be served right after
// the gate task, before the add task that writes `dev` (which depends on
// the gate task through `x`) was even dispatched.
TEST(NodeWorker, CopyFromAfterASubmitSeesWhatTheTaskWrote) {
  auto w = make_worker(1, 0);
  {
    Status init_status = w->init();
    ASSERT_TRUE(init_status.ok()) << init_status.to_string();
  }
  const uint32_t n = 64;
  float* x = static_cast<float*>(*w->alloc_shared(n * 4));
  float* back = static_cast<float*>(*w->alloc_shared(n * 4));
  for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  Gate* g = new (*w->alloc_shared(sizeof(Gate))) Gate();
  std::thread opener;
  Status s = w->run([&](Orchestrator& o) -> Status {
    TASKRING_ASSIGN_OR_RETURN(uint64_t dev, o.malloc(0, n * 4));
    ChipTensor X = make_tensor_external(x, {1, n});
    ChipTaskArgs hold;
    hold.add_inout(X).add_scalar(reinterpret_cast<uintptr_t>(g));
    TASKRING_RETURN_IF_ERROR(o.submit_next_level(kGateChip, hold, 0));
    ChipTensor d = make_tensor_external(reinterpret_cast<void*>(static_cast<uintptr_t>(dev)), {1, n});
    d.address_space = AddressSpace::DEVICE;
    ChipTaskArgs add;
    add.add_input(X).add_output(d).add_scalar(f32_bits(1.0f));
    TASKRING_RETURN_IF_ERROR(o.submit_next_level(kAddScalar, add, 0));
    EXPECT_TRUE(wait_started(g, 1).ok());
    opener = std::thread([g] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      open_gate(g);
    });
    TASKRING_RETURN_IF_ERROR(o.copy_from(0, back, dev, n * 4));
    for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(back[i], x[i] + 1.0f) << i;
    return o.free(0, dev);
  });
  opener.join();
  ASSERT_TRUE(s.ok()) << s.to_string();
}

TEST(NodeWorker, ChipMemoryControlCallsRoundTripThroughTheChild) {
  auto w = make_worker(1, 0);
  {
    Status init_status = w->init();
    ASSERT_TRUE(init_status.ok()) << init_status.to_string();
  }
  const uint32_t n = 128;
  float* x = static_cast<float*>(*w->alloc_shared(n * 4));
  float* y = static_cast<float*>(*w->alloc_shared(n * 4));
  float* back = static_cast<float*>(*w->alloc_shared(n * 4));
  for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i) * 0.5f;
  float outside[4] = {};
  Status s = w->run([&](Orchestrator& o) -> Status {
    TASKRING_ASSIGN_OR_RETURN(uint64_t dev, o.malloc(0, n * 4));
    TASKRING_RETURN_IF_ERROR(o.copy_to(0, dev, x, n * 4));
    EXPECT_EQ(o.copy_to(0, dev, outside, sizeof(outside)).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(o.malloc(3, 64).status().code(), StatusCode::kOutOfRange);
    ChipTensor d = make_tensor_external(reinterpret_cast<void*>(static_cast<uintptr_t>(dev)), {1, n});
    d.address_space = AddressSpace::DEVICE;
    ChipTensor Y = make_tensor_external(y, {1, n});
    ChipTaskArgs a;
    a.add_input(d).add_output(Y).add_scalar(f32_bits(1.0f));
    TASKRING_RETURN_IF_ERROR(o.submit_next_level(kAddScalar, a, 0));
    TASKRING_RETURN_IF_ERROR(o.copy_from(0, back, dev, n * 4));
    return Status::Ok();
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(back[i], x[i]) << i;
    ASSERT_EQ(y[i], x[i] + 1.0f) << i;
  }
  EXPECT_TRUE(w->close().ok());
}

TEST(NodeWorker, SubFailureThenNextRunSucceeds) {
  auto w = make_worker(0, 1);
  {
    Status init_status = w->init();
    ASSERT_TRUE(init_status.ok()) << init_status.to_string();
  }
  Gate* g = new_gate(*w);
  Status s = w->run([&](Orchestrator& o) {
    ChipTaskArgs a;
    return o.submit_sub(kFail, a);
  });
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("injected SUB failure"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("SUB 0 (pid"), std::string::npos) << s.message();
  s = w->run([&](Orchestrator& o) {
    ChipTaskArgs a;
    a.add_scalar(addr(g));
    return o.submit_sub(kCount, a);
  });
  EXPECT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(g->ran.load(), 1u);
}

TEST(NodeWorker, OrchestrationErrorRunsNothingDownstreamAndWorkerStaysUsable) {
  auto w = make_worker(0, 2);
  {
    Status init_status = w->init();
    ASSERT_TRUE(init_status.ok()) << init_status.to_string();
  }
  Gate* g = new_gate(*w);
  Gate* counter = new_gate(*w);
  ChipTensor buf = make_tensor_external(*w->alloc_shared(4096), {1024});
  RunHandle h = w->submit([&](Orchestrator& o) -> Status {
    ChipTaskArgs head;
    head.add_output(buf).add_scalar(addr(g));
    TASKRING_RETURN_IF_ERROR(o.submit_sub(kGateSub, head));
    TASKRING_RETURN_IF_ERROR(wait_started(g, 1));  // started work is not cancelled; unstarted is
    for (int i = 0; i < 4; ++i) {
      ChipTaskArgs c;
      c.add_input(buf).add_scalar(addr(counter));
      TASKRING_RETURN_IF_ERROR(o.submit_sub(kCount, c));
    }
    return invalid_argument("orchestration gave up");
  });
  open_gate(g);
  Status s = h.wait(Deadline::after_ms(30000));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
  EXPECT_EQ(counter->ran.load(), 0u) << "no consumer ran";
  EXPECT_EQ(h.counts().skipped, 4u);
  s = w->run([&](Orchestrator& o) {
    ChipTaskArgs c;
    c.add_input(buf).add_scalar(addr(counter));
    return o.submit_sub(kCount, c);
  });
  EXPECT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(counter->ran.load(), 1u);
}

TEST(NodeWorker, ProducerFailureInMixedChainRunsNothingDownstream) {
  auto w = make_worker(1, 1);
  {
    Status init_status = w->init();
    ASSERT_TRUE(init_status.ok()) << init_status.to_string();
  }
  Gate* counter = new_gate(*w);
  ChipTensor A = make_tensor_external(*w->alloc_shared(1024), {1, 256});
  ChipTensor B = make_tensor_external(*w->alloc_shared(1024), {1, 256});
  RunHandle h = w->submit([&](Orchestrator& o) -> Status {
    ChipTaskArgs p;  // SUB producer fails
    p.add_output(A);
    TASKRING_RETURN_IF_ERROR(o.submit_sub(kFail, p));
    ChipTaskArgs c;  // chip consumer of A, producer of B
    c.add_input(A).add_output(B).add_scalar(f32_bits(1.0f));
    if (!o.submit_next_level(kAddScalar, c, 0).ok()) return Status::Ok();  // fail-fast: also nothing runs
    ChipTaskArgs d;                                                        // SUB consumer of B
    d.add_input(B).add_scalar(addr(counter));
    (void)o.submit_sub(kCount, d);
    return Status::Ok();
  });
  Status s = h.wait(Deadline::after_ms(30000));
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s.to_string();
  EXPECT_EQ(counter->ran.load(), 0u);
  EXPECT_EQ(h.counts().completed, 0u);
  EXPECT_EQ(h.counts().failed, 1u);
  EXPECT_TRUE(w->close().ok());
}

TEST(NodeWorker, ChipKilledDuringTaskFailsTheRunNamingIt) {
  auto w = make_worker(2, 0);
  {
    Status init_status = w->init();
    ASSERT_TRUE(init_status.ok()) << init_status.to_string();
  }
  Gate* g = new_gate(*w);
  const pid_t victim = w->chip_pid(0);
  RunHandle h = w->submit([&](Orchestrator& o) {
    ChipTaskArgs a;
    a.add_scalar(addr(g));
    return o.submit_next_level(kGateChip, a, 0);
  });
  ASSERT_TRUE(wait_started(g, 1).ok());
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  const uint64_t t0 = mono_ns();
  Status s = h.wait(Deadline::after_ms(10000));
  const uint64_t detect_ms = (mono_ns() - t0) / 1000000;
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.to_string();
  EXPECT_NE(s.message().find("chip 0 (pid " + std::to_string(victim) + ")"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("SIGKILL"), std::string::npos) << s.message();
  RecordProperty("detect_ms", static_cast<int>(detect_ms));
  // Later dispatches to the dead chip fail fast; the live chip still works.
  s = w->run(
      [&](Orchestrator& o) {
        ChipTaskArgs a;
        a.add_scalar(addr(g));
        return o.submit_next_level(kGateChip, a, 0);
      },
      Deadline::after_ms(10000));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.to_string();
  open_gate(g);
  s = w->run(
      [&](Orchestrator& o) {
        ChipTaskArgs a;
        a.add_scalar(addr(g));
        return o.submit_next_level(kGateChip, a, 1);
      },
      Deadline::after_ms(10000));
  EXPECT_TRUE(s.ok()) << s.to_string();
  EXPECT_TRUE(w->close().ok());
}

// Issue 38, finding 4: a stopped child (SIGSTOP) never exits and never
// answers. The stall watch kills it once it stays stopped past
// stall_timeout_ms, and the run fails naming the child and its pid (the
// run's own deadline, 20 s here, would otherwise be all that ends it).
NodeConfig stall_config(uint64_t ms) {
  NodeConfig c;
  c.stall_timeout_ms = ms;
  return c;
}

void expect_stopped_child_fails_the_run(RunHandle& h, const std::string& who, pid_t victim) {
  const uint64_t t0 = mono_ns();
  Status s = h.wait(Deadline::after_ms(20000));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.to_string();
  EXPECT_NE(s.message().find(who + " (pid " + std::to_string(victim) + ")"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("stopped"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("stall_timeout_ms=300"), std::string::npos) << s.message();
  ::testing::Test::RecordProperty("detect_ms", static_cast<int>((mono_ns() - t0) / 1000000));
  EXPECT_TRUE(wait_pid_gone(victim, 10000)) << who << " was not killed";
}

TEST(NodeWorker, StoppedChipIsKilledAndFailsTheRunNamingIt) {
  auto w = make_worker(2, 0, stall_config(300));
  {
    Status init_status = w->init();
    ASSERT_TRUE(init_status.ok()) << init_status.to_string();
  }
  Gate* g = new_gate(*w);
  const pid_t victim = w->chip_pid(0);
  RunHandle h = w->submit([&](Orchestrator& o) {
    ChipTaskArgs a;
    a.add_scalar(addr(g));
    return o.submit_next_level(kGateChip, a, 0);
  });
  ASSERT_TRUE(wait_started(g, 1).ok());
  ASSERT_EQ(kill(victim, SIGSTOP), 0);
  expect_stopped_child_fails_the_run(h, "chip 0", victim);
  open_gate(g);
  EXPECT_TRUE(w->close().ok());
}

TEST(NodeWorker, StoppedSubIsKilledAndFailsTheRunNamingIt) {
  auto w = make_worker(1, 1, stall_config(300));
  {
    Status init_status = w->init();
    ASSERT_TRUE(init_status.ok()) << init_status.to_string();
  }
  Gate* g = new_gate(*w);
  const pid_t victim = w->sub_pid(0);
  RunHandle h = w->submit([&](Orchestrator& o) {
    ChipTaskArgs a;
    a.add_scalar(addr(g));
    return o.submit_sub(kGateSub, a);
  });
  ASSERT_TRUE(wait_started(g, 1).ok());
  ASSERT_EQ(kill(victim, SIGSTOP), 0);
  expect_stopped_child_fails_the_run(h, "SUB 0", victim);
  open_gate(g);
  EXPECT_TRUE(w->close().ok());
}

// A group whose member stops: the members that answer finish, the stopped
// one is killed at the stall timeout, and the group's error ends the run.
TEST(NodeWorker, StoppedGroupMemberFailsTheGroupNamingIt) {
  auto w = make_worker(2, 0, stall_config(300));
  {
    Status init_status = w->init();
    ASSERT_TRUE(init_status.ok()) << init_status.to_string();
  }
  Gate* g = new_gate(*w);
  const pid_t victim = w->chip_pid(1);
  RunHandle h = w->submit([&](Orchestrator& o) {
    ChipTaskArgs a0, a1;
    a0.add_scalar(addr(g));
    a1.add_scalar(addr(g));
    const ChipTaskArgs* ga[] = {&a0, &a1};
    const int chips[] = {0, 1};
    return o.submit_next_level_group(kGateChip, ga, chips);
  });
  ASSERT_TRUE(wait_started(g, 2).ok());
  ASSERT_EQ(kill(victim, SIGSTOP), 0);
  open_gate(g);
  expect_stopped_child_fails_the_run(h, "chip 1", victim);
  EXPECT_NE(h.wait(Deadline::after_ms(0)).message().find("group of 2"), std::string::npos);
  EXPECT_TRUE(w->close().ok());
}

TEST(NodeWorker, StallTimeoutKnobIsValidated) {
  NodeConfig c;
  c.env = [](std::string_view name) -> std::optional<std::string> {
    if (name == "TASKRING_NODE_STALL_TIMEOUT_MS") return "soon";
    return std::nullopt;
  };
  auto w = make_worker(1, 0, c);
  Status s = w->init();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
  EXPECT_NE(s.message().find("TASKRING_NODE_STALL_TIMEOUT_MS"), std::string::npos) << s.message();
}

TEST(NodeWorker, ChipKilledDuringControlCallFailsTheCall) {
  auto w = make_worker(1, 0);
  {
    Status init_status = w->init();
    ASSERT_TRUE(init_status.ok()) << init_status.to_string();
  }
  auto* flag = new (*w->alloc_shared(64)) std::atomic<uint32_t>(0);
  Gate* g = new_gate(*w);  // only its bell: the child does not ring it, so wait in slices
  const pid_t victim = w->chip_pid(0);
  Status ping;
  std::thread caller([&] { ping = w->ping_chip(0, 20'000'000'000ull, flag); });
  Status seen = bell_wait(
      g->bell, [&] { return flag->load(std::memory_order_acquire) != 0; }, [] { return Status::Ok(); },
      Deadline::after_ms(10000), "control frame held", 1'000'000);
  ASSERT_TRUE(seen.ok());
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  caller.join();
  EXPECT_EQ(ping.code(), StatusCode::kUnavailable) << ping.to_string();
  EXPECT_NE(ping.message().find("pid " + std::to_string(victim)), std::string::npos) << ping.message();
  EXPECT_NE(ping.message().find("SIGKILL"), std::string::npos) << ping.message();
  EXPECT_EQ(w->ping_chip(0).code(), StatusCode::kUnavailable) << "fails fast afterwards";
  EXPECT_TRUE(w->close().ok());
}

TEST(NodeWorker, ParentKilledChildrenExitAndUseNoNamedShm) {
  int up[2];
  ASSERT_EQ(pipe(up), 0);
  int hold[2];
  ASSERT_EQ(pipe(hold), 0);
  pid_t parent = fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    close(up[0]);
    close(hold[1]);
    auto w = make_worker(2, 1);
    if (!w->init().ok()) _exit(2);
    pid_t pids[3] = {w->chip_pid(0), w->chip_pid(1), w->sub_pid(0)};
    if (write(up[1], pids, sizeof(pids)) != sizeof(pids)) _exit(3);
    char c;
    while (read(hold[0], &c, 1) != 0) {
    }  // until killed
    _exit(0);
  }
  close(up[1]);
  close(hold[0]);
  pid_t pids[3] = {};
  pollfd p{up[0], POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 30000), 1);
  ASSERT_EQ(read(up[0], pids, sizeof(pids)), static_cast<ssize_t>(sizeof(pids)));
  for (pid_t c : pids) {
    std::ifstream maps("/proc/" + std::to_string(c) + "/maps");
    std::string line;
    int lines = 0;
    while (std::getline(maps, line)) {
      ++lines;
      EXPECT_EQ(line.find("/dev/shm/"), std::string::npos) << line;
    }
    EXPECT_GT(lines, 0);
  }
  ASSERT_EQ(kill(parent, SIGKILL), 0);
  int st = 0;
  ASSERT_EQ(waitpid(parent, &st, 0), parent);
  for (pid_t c : pids) EXPECT_TRUE(wait_pid_gone(c, 10000)) << "child " << c << " outlived its parent";
  close(up[0]);
  close(hold[1]);
}

TEST(NodeWorker, InitFailureInAChildNamesItAndRollsBack) {
  NodeConfig cfg;
  auto w = make_worker(2, 0, cfg);
  ChipCallable bad;
  bad.name = "missing_lib";
  bad.orchestration_library = "/nonexistent/liborch_missing.so";
  ASSERT_TRUE(w->register_chip(bad).ok());
  Status s = w->init();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("failed its init"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("missing_lib"), std::string::npos) << s.message();
  for (int c = 0; c < 2; ++c) EXPECT_TRUE(wait_pid_gone(w->chip_pid(c), 1)) << "chip " << c << " rolled back";
  EXPECT_TRUE(w->close().ok());
  EXPECT_TRUE(w->close().ok()) << "close twice";
  EXPECT_EQ(w->init().code(), StatusCode::kFailedPrecondition);
}

TEST(NodeWorker, InitHangIsRolledBackWithinTheStartupDeadline) {
  NodeConfig cfg;
  cfg.startup_timeout_ms = 500;
  cfg.child_init = [](ChildKind k, int i) {
    if (k == ChildKind::kChip && i == 1) pause();  // hangs until signalled
    return Status::Ok();
  };
  auto w = make_worker(2, 1, cfg);
  Status s = w->init();
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.to_string();
  EXPECT_NE(s.message().find("chip 1 (pid"), std::string::npos) << s.message();
  for (int c = 0; c < 2; ++c) EXPECT_TRUE(wait_pid_gone(w->chip_pid(c), 1));
  EXPECT_TRUE(wait_pid_gone(w->sub_pid(0), 1));
}

TEST(NodeWorker, ChildExitingBeforeReadyIsReported) {
  NodeConfig cfg;
  cfg.child_init = [](ChildKind k, int) {
    if (k == ChildKind::kSub) _exit(3);
    return Status::Ok();
  };
  auto w = make_worker(1, 1, cfg);
  Status s = w->init();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.to_string();
  EXPECT_NE(s.message().find("SUB 0 (pid"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("exited with status 3"), std::string::npos) << s.message();
  EXPECT_TRUE(wait_pid_gone(w->chip_pid(0), 1));
}

TEST(NodeWorker, InitRefusesWhenThreadsAlreadyRun) {
  auto w = make_worker(1, 0);
  std::mutex mu;
  std::condition_variable cv;
  bool go = false;
  std::thread t([&] {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return go; });
  });
  Status s = w->init();
  {
    std::lock_guard<std::mutex> lk(mu);
    go = true;
  }
  cv.notify_all();
  t.join();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.to_string();
  EXPECT_NE(s.message().find("forked before any thread"), std::string::npos) << s.message();
}

TEST(NodeWorker, GroupMemberFailureGivesOneErrorAndConsumersAreSkipped) {
  auto w = make_worker(2, 0);
  {
    Status init_status = w->init();
    ASSERT_TRUE(init_status.ok()) << init_status.to_string();
  }
  ChipTensor X = make_tensor_external(*w->alloc_shared(1024), {1, 256});
  ChipTensor Y = make_tensor_external(*w->alloc_shared(2048), {2, 256});
  ChipTensor Z = make_tensor_external(*w->alloc_shared(2048), {2, 256});
  RunHandle h = w->submit([&](Orchestrator& o) -> Status {
    ChipTensor y0 = Y.view({1, 256}, {0, 0}), y1 = Y.view({1, 256}, {1, 0});
    ChipTaskArgs a0, a1;
    a0.add_input(X).add_output(y0).add_scalar(f32_bits(1.0f)).add_scalar(uint64_t{0});
    a1.add_input(X).add_output(y1).add_scalar(f32_bits(1.0f)).add_scalar(uint64_t{1});  // fails
    const ChipTaskArgs* ga[] = {&a0, &a1};
    const int chips[] = {0, 1};
    TASKRING_RETURN_IF_ERROR(o.submit_next_level_group(kAddScalar, ga, chips));
    ChipTensor z0 = Z.view({1, 256}, {0, 0}), z1 = Z.view({1, 256}, {1, 0});
    ChipTaskArgs c0, c1;
    c0.add_input(y0).add_output(z0).add_scalar(f32_bits(1.0f));
    c1.add_input(y1).add_output(z1).add_scalar(f32_bits(1.0f));
    const ChipTaskArgs* ca[] = {&c0, &c1};
    (void)o.submit_next_level_group(kAddScalar, ca, chips);  // fail-fast is fine too
    return Status::Ok();
  });
  Status s = h.wait(Deadline::after_ms(30000));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("group of 2"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("chip 1"), std::string::npos) << s.message();
  EXPECT_EQ(h.counts().failed, 1u);
  EXPECT_EQ(h.counts().completed, 0u);
  EXPECT_EQ(h.counts().submitted, h.counts().failed + h.counts().skipped);
}

TEST(NodeWorker, HeapExhaustionIsATimeoutErrorNamingTheKnob) {
  NodeConfig cfg;
  cfg.heap_wait_ms = 100;
  auto w = make_worker(1, 0, cfg);
  {
    Status init_status = w->init();
    ASSERT_TRUE(init_status.ok()) << init_status.to_string();
  }
  Status s = w->run([&](Orchestrator& o) -> Status {
    TASKRING_ASSIGN_OR_RETURN(ChipTensor all, o.alloc({(1u << 20) / 4}, DataType::FLOAT32));
    (void)all;
    return o.alloc({16}, DataType::FLOAT32).status();
  });
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.to_string();
  EXPECT_NE(s.message().find("heap_ring_bytes"), std::string::npos) << s.message();
  EXPECT_TRUE(w->run([](Orchestrator& o) { return o.alloc({16}, DataType::FLOAT32).status(); }).ok())
      << "the next run starts with an empty ring";
}

TEST(NodeWorker, CloseRacingARunResolvesItAndReapsChildren) {
  auto w = make_worker(1, 1);
  {
    Status init_status = w->init();
    ASSERT_TRUE(init_status.ok()) << init_status.to_string();
  }
  Gate* g = new_gate(*w);
  const pid_t sub = w->sub_pid(0), chip = w->chip_pid(0);
  RunHandle h = w->submit([&](Orchestrator& o) {
    ChipTaskArgs a;
    a.add_scalar(addr(g));
    return o.submit_sub(kGateSub, a);  // never released
  });
  ASSERT_TRUE(wait_started(g, 1).ok());
  Status closed;
  std::thread closer([&] { closed = w->close(); });
  Status s = h.wait(Deadline::after_ms(30000));
  closer.join();
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(closed.ok()) << closed.to_string();
  EXPECT_TRUE(wait_pid_gone(sub, 1));
  EXPECT_TRUE(wait_pid_gone(chip, 1));
  EXPECT_TRUE(w->close().ok()) << "close twice";
  EXPECT_EQ(w->submit([](Orchestrator&) { return Status::Ok(); }).wait().code(), StatusCode::kFailedPrecondition);
}

TEST(NodeWorker, BadConfigAndLateRegistrationAreErrors) {
  NodeConfig cfg;
  cfg.chips = -1;
  NodeWorker bad(cfg);
  Status s = bad.init();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("chips -1"), std::string::npos) << s.message();
  auto w = make_worker(1, 0);
  EXPECT_EQ(w->register_sub("count", [](const ChipTaskArgs&) { return Status::Ok(); }).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(w->alloc_shared(64).status().code(), StatusCode::kFailedPrecondition);
  {
    Status init_status = w->init();
    ASSERT_TRUE(init_status.ok()) << init_status.to_string();
  }
  EXPECT_EQ(w->register_chip(add_scalar_callable()).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w->alloc_shared(1ull << 30).status().code(), StatusCode::kResourceExhausted);
}

// The chip child's thread count, seen from its orchestration. An inline chip
// runs everything on its serving thread; a threaded one adds the
// orchestrator and its executors. No child starts an OpenBLAS pool (init
// sets BLAS single-threaded before it forks).
void thread_count_entry(const ChipTaskArgs& a) {
  *reinterpret_cast<int32_t*>(a.scalar(0)) = taskring::testing::process_thread_count();
}

// Starts a node of `chips` chips on `cfg` (small heaps), runs `entry` once on
// every chip, each given the address of its own `words` int32s (scalar 0),
// and returns them all, chip 0's first.
Expected<std::vector<int32_t>> probe_chips(NodeConfig cfg, int chips, OrchestrationEntry entry, int words) {
  cfg.chips = chips;
  cfg.heap_ring_bytes = 1 << 20;
  cfg.shared_bytes = 1 << 20;
  NodeWorker w(cfg);
  ChipCallable c;
  c.name = "probe";
  c.entry = entry;
  TASKRING_ASSIGN_OR_RETURN(const int id, w.register_chip(c));
  TASKRING_RETURN_IF_ERROR(w.init());
  TASKRING_ASSIGN_OR_RETURN(void* mem, w.alloc_shared(static_cast<uint64_t>(chips * words) * 4));
  auto* out = static_cast<int32_t*>(mem);
  RunHandle h = w.submit([&](Orchestrator& o) -> Status {
    for (int chip = 0; chip < chips; ++chip) {
      ChipTaskArgs a;
      a.add_scalar(addr(out + words * chip));
      TASKRING_RETURN_IF_ERROR(o.submit_next_level(id, a, chip));
    }
    return Status::Ok();
  });
  TASKRING_RETURN_IF_ERROR(h.wait(Deadline::after_ms(30000)));
  std::vector<int32_t> got(out, out + chips * words);
  TASKRING_RETURN_IF_ERROR(w.close());
  return got;
}

Expected<int32_t> chip_thread_count(NodeConfig cfg) {
  cfg.chip_threads = 2;
  TASKRING_ASSIGN_OR_RETURN(auto got, probe_chips(cfg, 1, thread_count_entry, 1));
  return got[0];
}

TEST(NodeWorker, ChipInlineLeavesEachChipOneThread) {
  NodeConfig on, off, from_env, bad_env;
  on.chip_inline = NodeConfig::ChipInline::kOn;
  off.chip_inline = NodeConfig::ChipInline::kOff;
  from_env.env = map_env({{"TASKRING_RUN_INLINE", "yes"}});  // kAuto: the env decides
  auto inl = chip_thread_count(on);
  ASSERT_TRUE(inl.ok()) << inl.status().to_string();
  auto threaded = chip_thread_count(off);
  ASSERT_TRUE(threaded.ok()) << threaded.status().to_string();
  EXPECT_EQ(*inl, 1) << "inline: the serving thread only (an extra one is likely an OpenBLAS pool)";
  EXPECT_EQ(*threaded, 4) << "threaded: serving thread + orchestrator + 2 executors";
  auto env = chip_thread_count(from_env);
  ASSERT_TRUE(env.ok()) << env.status().to_string();
  EXPECT_EQ(*env, *inl);
  bad_env.env = map_env({{"TASKRING_RUN_INLINE", "sometimes"}});
  auto bad = chip_thread_count(bad_env);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("TASKRING_RUN_INLINE"), std::string::npos) << bad.status().to_string();
}

// What a chip child sees of its CPUs: out[0] the CPUs in its affinity mask,
// out[1] the lowest of them, out[2] usable_cpus() (what its spin-or-park
// decisions count).
void affinity_entry(const ChipTaskArgs& a) {
  auto* out = reinterpret_cast<int32_t*>(a.scalar(0));
  cpu_set_t set;
  CPU_ZERO(&set);
  (void)sched_getaffinity(0, sizeof(set), &set);
  out[0] = CPU_COUNT(&set);
  out[1] = -1;
  for (int c = 0; c < CPU_SETSIZE && out[1] < 0; ++c)
    if (CPU_ISSET(c, &set)) out[1] = c;
  out[2] = usable_cpus();
}

TEST(NodeWorker, PinnedChipsGetOneCpuEachInTurnAndStillCountTheNodes) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(sched_getaffinity(0, sizeof(mine), &mine), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &mine)) cpus.push_back(c);
  const int n = static_cast<int>(cpus.size());
  for (auto pin : {NodeConfig::ChipPin::kOn, NodeConfig::ChipPin::kOff}) {
    const bool on = pin == NodeConfig::ChipPin::kOn;
    SCOPED_TRACE(on ? "kOn" : "kOff");
    NodeConfig cfg;
    cfg.chip_threads = 1;
    cfg.chip_pin = pin;
    auto got = probe_chips(cfg, 3, affinity_entry, 3);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    for (int chip = 0; chip < 3; ++chip) {
      const int32_t* o = got->data() + 3 * chip;
      EXPECT_EQ(o[0], on ? 1 : n) << "chip " << chip;
      if (on) {
        EXPECT_EQ(o[1], cpus[static_cast<size_t>(chip % n)]) << "chip " << chip;
      }
      EXPECT_EQ(o[2], n) << "chip " << chip << ": spin decisions must count the node's CPUs";
    }
  }
}

TEST(NodeWorker, AutoPinningPolicy) {
  // Inline chips that outnumber the CPUs.
  EXPECT_TRUE(run_chips_inline_by_default(8, 2));
  EXPECT_TRUE(run_chips_inline_by_default(2, 2)) << "one executor each anyway: one thread per chip";
  EXPECT_TRUE(run_chips_inline_by_default(1, 1));
  EXPECT_FALSE(run_chips_inline_by_default(1, 2));
  EXPECT_FALSE(run_chips_inline_by_default(3, 4));
  EXPECT_TRUE(pin_chips_by_default(8, 2, true, 1));
  EXPECT_FALSE(pin_chips_by_default(8, 2, false, 1)) << "threaded chips that outnumber the CPUs float";
  // Chips that fit the CPUs one each, on one executor thread: bind to core.
  EXPECT_TRUE(pin_chips_by_default(2, 2, false, 1));
  EXPECT_TRUE(pin_chips_by_default(3, 4, true, 4));
  // Several executor threads, or one chip: never squeezed onto one CPU.
  EXPECT_FALSE(pin_chips_by_default(2, 4, false, 2));
  EXPECT_FALSE(pin_chips_by_default(1, 2, false, 1));
  EXPECT_FALSE(pin_chips_by_default(1, 2, true, 1));
}

TEST(NodeWorker, AutoPinsChipsThatFitTheCpusOneEach) {
  const int n = usable_cpus();
  if (n < 2) GTEST_SKIP() << "one usable CPU: two chips cannot have one each";
  NodeConfig cfg;
  cfg.chip_threads = 1;
  auto got = probe_chips(cfg, 2, affinity_entry, 3);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_EQ((*got)[0], 1);
  EXPECT_EQ((*got)[3], 1);
  EXPECT_NE((*got)[1], (*got)[4]) << "both chips pinned to one CPU";
  cfg.chip_threads = 2;
  auto two = probe_chips(cfg, 1, affinity_entry, 3);
  ASSERT_TRUE(two.ok()) << two.status().to_string();
  EXPECT_EQ((*two)[0], n) << "a chip with two executor threads keeps every CPU";
}

TEST(NodeWorker, ChipPinKnobDecidesUnderAuto) {
  const int n = usable_cpus();
  if (n < 2) GTEST_SKIP() << "one usable CPU: pinned and free look alike";
  NodeConfig cfg;
  cfg.chip_threads = 1;
  cfg.env = map_env({{"TASKRING_CHIP_PIN", "off"}});
  auto off = probe_chips(cfg, 2, affinity_entry, 3);
  ASSERT_TRUE(off.ok()) << off.status().to_string();
  EXPECT_EQ((*off)[0], n) << "off: the default would have pinned these two";
  EXPECT_EQ((*off)[3], n);
  cfg.chip_threads = 2;
  cfg.env = map_env({{"TASKRING_CHIP_PIN", "on"}});
  auto on = probe_chips(cfg, 1, affinity_entry, 3);
  ASSERT_TRUE(on.ok()) << on.status().to_string();
  EXPECT_EQ((*on)[0], 1) << "on: the default would have left this chip free";
  cfg.chip_pin = NodeConfig::ChipPin::kOff;  // the config wins over the knob
  auto config = probe_chips(cfg, 1, affinity_entry, 3);
  ASSERT_TRUE(config.ok()) << config.status().to_string();
  EXPECT_EQ((*config)[0], n);
  cfg.chip_pin = NodeConfig::ChipPin::kAuto;
  cfg.env = map_env({{"TASKRING_CHIP_PIN", "sometimes"}});
  auto bad = probe_chips(cfg, 1, affinity_entry, 3);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("TASKRING_CHIP_PIN"), std::string::npos) << bad.status().to_string();
}

}  // namespace
}  // namespace taskring::node::testing
