// The program net_domain_test runs under mpirun -np 2: a comm domain over
// 2 nodes x 2 chips (domain ranks 0,1 on node 0 and 2,3 on node 1), one
// scenario per run. Every rank runs this main; rank 0 prints "SCENARIO
// <name> PASS" or "SCENARIO <name> FAIL: why". "<name>_relay" runs it with
// NetConfig::fast_paths off: no doorbells, so the two nodes do not share
// their domain objects (each its own, everything through the progress
// threads and MPI, as between hosts).
#include <signal.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "taskring/kernels/comm_kernels.hpp"
#include "taskring/net/net_worker.hpp"
#include "taskring/node/collectives.hpp"
#include "taskring/node/comm_domain.hpp"

using namespace taskring;
using namespace taskring::net;
using kernels::ProbeOp;

namespace {

constexpr int kChips = 2;
constexpr uint32_t kN = 64;            // floats per rank's tile
constexpr uint64_t kSignalOff = 8192;  // window offset of the ring-notify signal
std::string g_scenario;
bool g_relay = false;  // "_relay": fast paths off, no shared objects
int g_node = 0;
float* g_in[kChips] = {};
float* g_out[kChips] = {};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const std::vector<node::GlobalMember> kMembers = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
const std::vector<node::DomainBufferSpec> kBuffers = {{"tile", 4096}, {"signal", 4096}, {"scratch", 64 << 10}};

// One group task per op on a fresh domain over both nodes; op scalars as
// comm_probe reads them (s1 op, s2 arg).
Status probe_run(NodeWorker& n, int comm, std::vector<std::pair<ProbeOp, uint64_t>> ops) {
  return n.run([&](Orchestrator& o) -> Status {
    TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_global_domain("t", kMembers, 128 << 10, kBuffers));
    if (d->size() != 4 || d->chips().size() != kChips)
      return internal_error("domain of " + std::to_string(d->size()) + " ranks, " + std::to_string(d->chips().size()) +
                            " here");
    std::vector<ChipTensor> tin, tout;  // the args keep pointers to them
    for (int c = 0; c < kChips; ++c) {
      tin.push_back(make_tensor_external(g_in[c], {kN}));
      tout.push_back(make_tensor_external(g_out[c], {kN}));
    }
    for (const auto& [op, arg] : ops) {
      std::vector<ChipTaskArgs> args(kChips);
      for (int c = 0; c < kChips; ++c) {
        if (op == ProbeOp::kPutGet) {
          args[c].add_input(tin[c]);
          args[c].add_output(tout[c]);
        }
        args[c].add_scalar(static_cast<uint64_t>(op)).add_scalar(arg);
      }
      TASKRING_RETURN_IF_ERROR(node::submit_comm_group(o, comm, *d, kernels::comm_id::kCommProbe, args));
    }
    return Status::Ok();
  });
}

// put_tile to the right neighbour (1 -> 2 and 3 -> 0 cross nodes), ring
// notify, barriers; then each rank holds its left neighbour's tile.
Status putget(NodeWorker& n, int comm) {
  for (int c = 0; c < kChips; ++c)
    for (uint32_t i = 0; i < kN; ++i) {
      g_in[c][i] = static_cast<float>((g_node * kChips + c) * 1000 + i);
      g_out[c][i] = -1;
    }
  TASKRING_RETURN_IF_ERROR(
      probe_run(n, comm, {{ProbeOp::kPutGet, 0}, {ProbeOp::kRingNotify, kSignalOff}, {ProbeOp::kBarrier, 20}}));
  for (int c = 0; c < kChips; ++c) {
    const int g = g_node * kChips + c, left = (g + 3) % 4;
    for (uint32_t i = 0; i < kN; ++i)
      if (g_out[c][i] != static_cast<float>(left * 1000 + i))
        return internal_error("domain rank " + std::to_string(g) + " element " + std::to_string(i) + " is " +
                              std::to_string(g_out[c][i]) + ", rank " + std::to_string(left) + " put " +
                              std::to_string(left * 1000 + i));
  }
  return Status::Ok();
}

Status expect_error(const Status& s, const std::string& part, const std::string& what) {
  if (!s.ok() && contains(s.message(), part)) return Status::Ok();
  return internal_error(what + ": expected an error with '" + part + "', got " + s.to_string());
}

// Bad member lists are refused before anything is allocated.
Status validation(NodeWorker& n) {
  return n.run([&](Orchestrator& o) -> Status {
    auto bad = [&](std::vector<node::GlobalMember> m) { return o.allocate_global_domain("v", m, 4096).status(); };
    TASKRING_RETURN_IF_ERROR(expect_error(bad({{0, 0}, {5, 0}}), "node not in [0, 2)", "node 5"));
    TASKRING_RETURN_IF_ERROR(expect_error(bad({{0, 0}, {1, 0}, {0, 0}}), "listed twice", "a member twice"));
    TASKRING_RETURN_IF_ERROR(expect_error(bad({{1 - g_node, 0}}), "no member is on this node", "no local member"));
    TASKRING_RETURN_IF_ERROR(expect_error(bad({{0, 7}, {1, 7}}), "chip 7 is not a chip of this node", "chip 7"));
    TASKRING_RETURN_IF_ERROR(expect_error(bad({}), "0 members", "no members"));
    return Status::Ok();
  });
}

float input(int rank, uint32_t i) { return static_cast<float>(rank + 1) * 0.1f + static_cast<float>(i) * 0.0013f; }

// Allreduce over 2 nodes x 2 chips (both algorithms; between hosts the
// push variant runs), against the one-node reference: FP32 sum in rank
// order 0..3. Then an allgather, which reads peer windows: it runs where
// the nodes share the domain's object (one host), and is refused between
// hosts, naming why.
Status collective(NodeWorker& n, int comm) {
  std::vector<ChipTensor> in, out;
  for (int c = 0; c < kChips; ++c) {
    in.push_back(make_tensor_external(g_in[c], {kN}));
    out.push_back(make_tensor_external(g_out[c], {kN}));
  }
  for (auto algo : {kernels::AllreduceAlgo::kOnePhase, kernels::AllreduceAlgo::kRing}) {
    for (int c = 0; c < kChips; ++c)
      for (uint32_t i = 0; i < kN; ++i) {
        g_in[c][i] = input(g_node * kChips + c, i);
        g_out[c][i] = -1;
      }
    TASKRING_RETURN_IF_ERROR(n.run([&](Orchestrator& o) -> Status {
      TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_global_domain("c", kMembers, 128 << 10, kBuffers));
      // Twice on one domain: both scratch parities.
      TASKRING_RETURN_IF_ERROR(node::submit_allreduce(o, comm, *d, in, out, algo, "scratch"));
      return node::submit_allreduce(o, comm, *d, out, in, algo, "scratch");  // 4 x the sum
    }));
    for (uint32_t i = 0; i < kN; ++i) {
      float ref = input(0, i);
      for (int q = 1; q < 4; ++q) ref += input(q, i);
      float ref2 = ref;
      for (int q = 1; q < 4; ++q) ref2 += ref;
      // Bit for bit where the sum runs in rank order 0..3: the one-phase
      // algorithm, and the push variant that any algorithm becomes between
      // hosts (relay). The ring algorithm, which runs as asked where the
      // nodes share the object, adds in its own order: within 4 ulp.
      const bool exact = g_relay || algo == kernels::AllreduceAlgo::kOnePhase;
      auto same = [exact](float got, float want) {
        return exact ? std::memcmp(&got, &want, 4) == 0 : std::fabs(got - want) <= 4e-7f * std::fabs(want);
      };
      for (int c = 0; c < kChips; ++c)
        if (!same(g_out[c][i], ref) || !same(g_in[c][i], ref2))
          return internal_error("allreduce (algo " + std::to_string(static_cast<int>(algo)) + ") rank " +
                                std::to_string(g_node * kChips + c) + " element " + std::to_string(i) + ": " +
                                std::to_string(g_out[c][i]) + " / " + std::to_string(g_in[c][i]) + ", reference " +
                                std::to_string(ref) + " / " + std::to_string(ref2));
    }
  }
  for (int c = 0; c < kChips; ++c)
    for (uint32_t i = 0; i < kN / 4; ++i) g_in[c][i] = static_cast<float>((g_node * kChips + c) * 100 + i);
  Status s = n.run([&](Orchestrator& o) -> Status {
    TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_global_domain("c", kMembers, 128 << 10, kBuffers));
    std::vector<ChipTensor> quarter;
    for (int c = 0; c < kChips; ++c) quarter.push_back(make_tensor_external(g_in[c], {kN / 4}));
    return node::submit_allgather(o, comm, *d, quarter, out, "scratch");
  });
  if (!g_relay) {
    // One host: the nodes share the domain's object, so an allgather (it
    // reads peer windows) runs as on one node; rank q's quarter lands at q.
    TASKRING_RETURN_IF_ERROR(s);
    for (int c = 0; c < kChips; ++c)
      for (uint32_t i = 0; i < kN; ++i)
        if (g_out[c][i] != static_cast<float>((i / (kN / 4)) * 100 + i % (kN / 4)))
          return internal_error("allgather rank " + std::to_string(g_node * kChips + c) + " element " +
                                std::to_string(i) + " is " + std::to_string(g_out[c][i]));
    return Status::Ok();
  }
  // Between hosts: this node's own refusal, or, when the other node refused
  // first, the abort that spread from it (possibly while this node was still
  // in the allocation barrier, the other node's arrivals in flight).
  if (!s.ok() && contains(s.message(), "a member on MPI rank " + std::to_string(1 - g_node) + " failed"))
    return Status::Ok();
  return expect_error(s, "spans nodes", "allgather over a global domain");
}

// The chip process `pid`'s mappings of comm domain objects: how many, and
// their bytes.
int domain_mappings(int pid, uint64_t* bytes = nullptr) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  int n = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("taskring-domain") == std::string::npos) continue;
    ++n;
    if (bytes != nullptr) {
      const size_t dash = line.find('-');
      *bytes += std::stoull(line.substr(dash + 1), nullptr, 16) - std::stoull(line.substr(0, dash), nullptr, 16);
    }
  }
  return n;
}

// Issue 36: a domain whose nodes share its object (one host) stays cached
// on both nodes after a passed run, every chip keeping its one mapping, and
// the next run of the same domain reuses it: each run starts from zeroed
// windows (kCheckZeroThenDirty fails on any byte the last run left: a
// tile, a signal, its own 0xFF), a fresh kernel barrier (a stale counter
// is a kernel error) and right put/notify results. The shared object has
// no request rings (no rank is reached through one): under 1 MiB where
// rings would add 1 MiB per rank. Through the relay (no shared object)
// nothing is cached.
Status reuse_rounds(NodeWorker& n, int comm) {
  const int want = g_relay ? 0 : 1;
  auto kept = [&](const std::string& after) -> Status {
    if (n.cached_domains() != want)
      return internal_error(after + ": " + std::to_string(n.cached_domains()) + " cached domains, expected " +
                            std::to_string(want));
    for (int c = 0; c < kChips; ++c) {
      uint64_t bytes = 0;
      if (const int m = domain_mappings(n.chip_pid(c), &bytes); m != want)
        return internal_error(after + ": chip " + std::to_string(c) + " maps " + std::to_string(m) +
                              " domain objects, expected " + std::to_string(want));
      if (bytes >= (1u << 20))
        return internal_error(after + ": chip " + std::to_string(c) + " maps " + std::to_string(bytes) +
                              " B of the domain: request rings in an object every member node shares");
    }
    return Status::Ok();
  };
  for (int i = 0; i < 3; ++i) {
    const std::string round = "round " + std::to_string(i);
    Status s = probe_run(n, comm, {{ProbeOp::kCheckZeroThenDirty, 0}, {ProbeOp::kBarrier, 3}});
    if (!s.ok()) return s.with_context(round + ", zero check");
    TASKRING_RETURN_IF_ERROR(kept(round + ", zero check"));
    if (s = putget(n, comm); !s.ok()) return s.with_context(round + ", put/notify");
    TASKRING_RETURN_IF_ERROR(kept(round + ", put/notify"));
  }
  return Status::Ok();
}

// A chip killed (SIGKILL) while the run that reuses the kept domain waits
// in it: node 1 kills its chip 1 (domain rank 3) 300 ms into a run whose
// ranks wait for a signal nobody sends (comm deadline 20 s). The run fails
// on both nodes (the dead chip, or the abort that spreads from it), and
// neither node keeps the domain: no cached domain, no mapping left in a
// live chip (the object is a memfd: nothing named outlives the processes).
Status kill_in_reuse(NodeWorker& n, int comm) {
  TASKRING_RETURN_IF_ERROR(probe_run(n, comm, {{ProbeOp::kBarrier, 2}}));  // kept on both nodes
  std::thread killer;
  if (g_node == 1)
    killer = std::thread([pid = n.chip_pid(1)] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      kill(pid, SIGKILL);
    });
  const Status s = probe_run(n, comm, {{ProbeOp::kWaitForever, 4096}});
  if (killer.joinable()) killer.join();
  if (s.ok()) return internal_error("the run with a killed chip passed");
  if (n.cached_domains() != 0)
    return internal_error("after the failed run " + std::to_string(n.cached_domains()) + " domains are still kept");
  for (int c = 0; c < kChips; ++c)
    if (!(g_node == 1 && c == 1) && domain_mappings(n.chip_pid(c)) != 0)
      return internal_error("after the failed run chip " + std::to_string(c) + " still maps the domain");
  return s;
}

// Issue 38: the nodes allocate different domains under one name (node 1's
// window is half node 0's): refused at allocation, naming the other node,
// well before the 20 s comm deadline.
Status mismatch(NodeWorker& n, int comm) {
  return n.run([&](Orchestrator& o) -> Status {
    const uint64_t window = g_node == 0 ? 256 << 10 : 128 << 10;
    TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_global_domain("mm", kMembers, window, kBuffers));
    std::vector<ChipTaskArgs> args(kChips);
    for (int c = 0; c < kChips; ++c) args[c].add_scalar(static_cast<uint64_t>(ProbeOp::kBarrier)).add_scalar(20);
    return node::submit_comm_group(o, comm, *d, kernels::comm_id::kCommProbe, args);
  });
}

}  // namespace

int main(int argc, char** argv) {
  const std::string label = argc > 1 ? argv[1] : "putget";
  const std::string relay = "_relay";
  g_relay = label.size() > relay.size() && label.compare(label.size() - relay.size(), relay.size(), relay) == 0;
  g_scenario = g_relay ? label.substr(0, label.size() - relay.size()) : label;
  g_node = NetWorker::launcher_rank();
  NetConfig cfg;
  cfg.fast_paths = !g_relay;
  cfg.node.chips = kChips;
  cfg.node.sub_workers = 0;
  cfg.node.shared_bytes = 1 << 20;
  cfg.node.heap_ring_bytes = 1 << 20;
  cfg.node.comm_timeout_ms = 20000;  // the failure scenario must end well before it
  // "reuse_uneven": node 1 keeps no domain, node 0 does: node 0 must notice
  // at once that node 1 dropped the one it kept, and allocate afresh too.
  if (g_scenario == "reuse_uneven" && g_node == 1) cfg.node.domain_cache = 0;
  cfg.pool_bytes = 1 << 20;
  cfg.staging_bytes = 1 << 20;
  cfg.node_setup = [](NodeWorker& n) -> Status {
    for (int c = 0; c < kChips; ++c) {
      TASKRING_ASSIGN_OR_RETURN(void* a, n.alloc_shared(kN * 4));
      TASKRING_ASSIGN_OR_RETURN(void* b, n.alloc_shared(kN * 4));
      g_in[c] = static_cast<float*>(a);
      g_out[c] = static_cast<float*>(b);
    }
    return Status::Ok();
  };
  NetWorker w(cfg);
  const int comm = *w.node().register_chip(node::comm_call_callable());
  // scalar 0: 0 putget, 1 fail on domain rank 3, 2 validation, 3 collective
  const int step = *w.register_task("step", [comm](NodeWorker& n, const ChipTaskArgs& a) -> Status {
    switch (a.scalar(0)) {
      case 0: return putget(n, comm);
      case 1: return probe_run(n, comm, {{ProbeOp::kFailOnRank, 3}});
      case 2: return validation(n);
      case 4: return mismatch(n, comm);
      case 5: return reuse_rounds(n, comm);
      case 6: return kill_in_reuse(n, comm);
      default: return collective(n, comm);
    }
  });
  Status init = w.init();
  if (!init.ok()) {
    std::printf("SCENARIO %s FAIL: init: %s\n", label.c_str(), init.to_string().c_str());
    (void)w.close();
    return 1;
  }
  if (w.rank() != 0) {
    Status s = w.serve();
    Status c = w.close();
    return s.ok() && c.ok() ? 0 : 1;
  }
  auto on_both = [&](uint64_t what) {
    return w.run([&](Orchestrator& o) -> Status {
      for (int r = 0; r < 2; ++r) {
        ChipTaskArgs a;
        a.add_scalar(what);
        TASKRING_RETURN_IF_ERROR(o.submit_next_level(step, a, r));
      }
      return Status::Ok();
    });
  };
  std::string fail;
  if (g_scenario == "putget") {
    for (int i = 0; i < 5 && fail.empty(); ++i) {
      Status s = on_both(0);
      if (!s.ok()) fail = "run " + std::to_string(i) + ": " + s.to_string();
    }
  } else if (g_scenario == "fail") {
    const auto t0 = std::chrono::steady_clock::now();
    Status s = on_both(1);
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("failing run: %.2f s: %s\n", sec, s.to_string().c_str());
    // Whichever node's error reaches rank 0 first names MPI rank 1: its own
    // (the failing member) or node 0's aborted wait.
    if (s.ok())
      fail = "the run passed";
    else if (!contains(s.message(), "rank 1 (pid") && !contains(s.message(), "a member on MPI rank 1 failed"))
      fail = "the error does not name rank 1: " + s.to_string();
    else if (!contains(s.message(), "fails on purpose") && !contains(s.message(), "a member on MPI rank 1 failed"))
      fail = "the error is neither the member's nor the abort naming it: " + s.to_string();
    else if (sec > 10.0)
      fail = "the failure took " + std::to_string(sec) + " s (comm_timeout_ms is 20 s): the abort did not spread";
    if (fail.empty()) {
      Status next = on_both(0);
      if (!next.ok()) fail = "the next run failed: " + next.to_string();
    }
  } else if (g_scenario == "validation") {
    Status s = on_both(2);
    if (!s.ok()) fail = s.to_string();
  } else if (g_scenario == "collective") {
    Status s = on_both(3);
    if (!s.ok())
      fail = s.to_string();
    else if (Status next = on_both(0); !next.ok())
      fail = "the next run failed: " + next.to_string();
  } else if (g_scenario == "reuse") {
    Status s = on_both(5);
    if (!s.ok()) fail = s.to_string();
    // A member fails in a run that reuses the domain: the run fails at
    // once, both nodes drop what they kept, and the next runs start from
    // zeroed windows again (a fresh domain, then cached and reused).
    if (fail.empty()) {
      const auto t0 = std::chrono::steady_clock::now();
      s = on_both(1);
      const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (s.ok())
        fail = "the failing run passed";
      else if (!contains(s.message(), "fails on purpose") && !contains(s.message(), "a member on MPI rank 1 failed"))
        fail = "the failing run's error names neither the member nor the abort: " + s.to_string();
      else if (sec > 10.0)
        fail = "the failing run took " + std::to_string(sec) + " s (comm_timeout_ms is 20 s)";
    }
    if (fail.empty()) {
      if (Status next = on_both(5); !next.ok()) fail = "after the failed run: " + next.to_string();
    }
  } else if (g_scenario == "reuse_kill") {
    const auto t0 = std::chrono::steady_clock::now();
    Status s = on_both(6);
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("run with a killed chip: %.2f s: %s\n", sec, s.to_string().c_str());
    if (s.ok())
      fail = "the run passed";
    else if (!contains(s.message(), "SIGKILL") && !contains(s.message(), "a member on MPI rank 1 failed"))
      fail = "the error names neither the killed chip nor the abort from its node: " + s.to_string();
    else if (sec > 10.0)
      fail = "the failure took " + std::to_string(sec) + " s (comm_timeout_ms is 20 s): the abort did not spread";
  } else if (g_scenario == "reuse_uneven") {
    for (int i = 0; i < 3 && fail.empty(); ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      Status s = on_both(0);
      const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!s.ok())
        fail = "run " + std::to_string(i) + ": " + s.to_string();
      else if (sec > 10.0)
        fail = "run " + std::to_string(i) + " took " + std::to_string(sec) + " s: node 0 waited for node 1";
    }
  } else if (g_scenario == "mismatch") {
    const auto t0 = std::chrono::steady_clock::now();
    Status s = on_both(4);
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("mismatched allocation: %.2f s: %s\n", sec, s.to_string().c_str());
    if (s.ok())
      fail = "the run passed";
    else if (!contains(s.message(), "allocated a different domain under this name"))
      fail = "the error does not say the domains differ: " + s.to_string();
    else if (!contains(s.message(), "MPI rank 0 allocated") && !contains(s.message(), "MPI rank 1 allocated"))
      fail = "the error names no node: " + s.to_string();
    else if (sec > 10.0)
      fail = "the refusal took " + std::to_string(sec) + " s (comm_timeout_ms is 20 s)";
    if (fail.empty()) {
      Status next = on_both(0);
      if (!next.ok()) fail = "the next run failed: " + next.to_string();
    }
  } else {
    fail = "unknown scenario";
  }
  if (fail.empty())
    std::printf("SCENARIO %s PASS\n", label.c_str());
  else
    std::printf("SCENARIO %s FAIL: %s\n", label.c_str(), fail.c_str());
  std::fflush(stdout);
  Status c = w.close();
  return fail.empty() && c.ok() ? 0 : 1;
}
