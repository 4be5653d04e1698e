// The program net_mpi_test runs under mpirun (-np 3): one scenario per run,
// every rank runs this main. Rank 0 checks what the scenario promises and
// prints "SCENARIO <name> PASS" or "SCENARIO <name> FAIL: why"; the test
// reads that line, the exit status and the output. Scenarios that end the
// job (a killed or a stopped rank) are judged by the test from the output.
#include <signal.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <mpi.h>

#include "buffer_table.hpp"
#include "data_mover.hpp"
#include "taskring/net/net_worker.hpp"
#include "transport.hpp"

using namespace taskring;
using namespace taskring::net;

namespace {

std::string g_scenario;
int g_failures = 0;

void check(bool ok, const std::string& what) {
  if (ok) return;
  ++g_failures;
  std::printf("SCENARIO %s FAIL: %s\n", g_scenario.c_str(), what.c_str());
  std::fflush(stdout);
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

float scalar_f(const ChipTaskArgs& a, int i) {
  uint32_t b = static_cast<uint32_t>(a.scalar(i));
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// SUB: y = x * mul + add over tensor 0 (INOUT) or tensor 0 -> tensor 1;
// scalar 2 delays the write (ms) so a missing dependency shows.
Status affine(const ChipTaskArgs& a) {
  const float mul = scalar_f(a, 0), add = scalar_f(a, 1);
  const uint64_t delay_ms = a.scalar(2);
  const ChipTensor& in = *a.tensor(0);
  const ChipTensor& out = *a.tensor(a.tensor_count() - 1);
  const uint64_t n = in.numel();
  std::vector<float> tmp(n);
  const float* x = in.data<float>();
  for (uint64_t i = 0; i < n; ++i) tmp[i] = x[i] * mul + add;
  if (delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  std::memcpy(out.data<float>(), tmp.data(), n * 4);
  return Status::Ok();
}

Status failing_sub(const ChipTaskArgs&) { return internal_error("deliberate failure in the SUB function"); }

uint64_t fbits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

struct Ids {
  int step = -1, fail = -1, die = -1, stop = -1, long_error = -1;
};

Status submit_step(Orchestrator& o, int step, const ChipTensor& t, int rank, float mul, float add, uint64_t delay,
                   const ChipTensor* out = nullptr) {
  ChipTaskArgs a;
  if (out) {
    a.add_input(t);
    a.add_output(*out);
  } else {
    a.add_inout(t);
  }
  a.add_scalar(fbits(mul)).add_scalar(fbits(add)).add_scalar(delay);
  return o.submit_next_level(step, a, rank);
}

std::vector<float> read(NetWorker& w, const RemoteBuffer& b) {
  std::vector<float> v(b.bytes / 4);
  Status s = w.remote_copy_from(v.data(), b.whole());
  check(s.ok(), "remote_copy_from: " + s.to_string());
  return v;
}

void scenario_roundtrip(NetWorker& w, const Ids& id) {
  // Buffers on ranks 1 and 2; tasks run on their owner and on another rank.
  const uint32_t n = 1024;
  auto b1 = w.remote_malloc(1, n * 4);
  auto b2 = w.remote_malloc(2, n * 4);
  check(b1.ok() && b2.ok(), "remote_malloc");
  if (!b1.ok() || !b2.ok()) return;
  std::vector<float> x(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  check(w.remote_copy_to(b1->whole(), x.data()).ok(), "remote_copy_to");
  auto t1 = w.remote_tensor(b1->whole(), {n}, DataType::FLOAT32);
  auto t2 = w.remote_tensor(b2->whole(), {n}, DataType::FLOAT32);
  check(t1.ok() && t2.ok(), "remote_tensor");
  for (int round = 0; round < 3; ++round) {
    Status s = w.run([&](Orchestrator& o) -> Status {
      // On rank 1 (owner, in place), then rank 2 reads b1 (fetched) and
      // writes b2 (its own), then rank 0 updates b2 (fetched, written back).
      TASKRING_RETURN_IF_ERROR(submit_step(o, id.step, *t1, 1, 2.0f, 1.0f, 0));
      TASKRING_RETURN_IF_ERROR(submit_step(o, id.step, *t1, 2, 1.0f, 0.5f, 0, &*t2));
      return submit_step(o, id.step, *t2, 0, 3.0f, 0.0f, 0);
    });
    check(s.ok(), "round trip run: " + s.to_string());
    std::vector<float> v1 = read(w, *b1), v2 = read(w, *b2);
    int bad = 0;
    for (uint32_t i = 0; i < n; ++i) {
      x[i] = x[i] * 2 + 1;
      if (v1[i] != x[i] || v2[i] != (x[i] + 0.5f) * 3) ++bad;
    }
    check(bad == 0, "round " + std::to_string(round) + ": " + std::to_string(bad) + " wrong elements");
  }
  // A group: one DAG node whose members start together on ranks 1 and 2.
  Status g = w.run([&](Orchestrator& o) -> Status {
    ChipTaskArgs a1, a2;
    a1.add_inout(*t1).add_scalar(fbits(1.0f)).add_scalar(fbits(2.0f)).add_scalar(uint64_t{0});
    a2.add_inout(*t2).add_scalar(fbits(1.0f)).add_scalar(fbits(3.0f)).add_scalar(uint64_t{0});
    const ChipTaskArgs* args[2] = {&a1, &a2};
    const int ranks[2] = {1, 2};
    return o.submit_next_level_group(id.step, args, ranks);
  });
  check(g.ok(), "group run: " + g.to_string());
  std::vector<float> g1 = read(w, *b1), g2 = read(w, *b2);
  check(g1[5] == x[5] + 2 && g2[5] == (x[5] + 0.5f) * 3 + 3, "group members did not both run");
  Status serve0 = w.serve();
  check(!serve0.ok() && contains(serve0.message(), "rank 0 drives"), "serve() on rank 0: " + serve0.to_string());
  check(w.remote_free(*b1).ok() && w.remote_free(*b2).ok(), "remote_free");
}

void scenario_deps(NetWorker& w, const Ids& id) {
  // One buffer of 8 floats on rank 1.
  auto b = w.remote_malloc(1, 8 * 4);
  auto c = w.remote_malloc(2, 4 * 4);
  check(b.ok() && c.ok(), "remote_malloc");
  if (!b.ok() || !c.ok()) return;
  std::vector<float> init = {1, 2, 3, 4, 5, 6, 7, 8};
  check(w.remote_copy_to(b->whole(), init.data()).ok(), "copy_to");
  // Offset overlap: [0,6) on rank 2 (slow), then [4,8) on rank 0. They
  // overlap in [4,6) and start at different offsets: the second must wait.
  auto lo = w.remote_tensor(b->range(0, 24), {6}, DataType::FLOAT32);
  auto hi = w.remote_tensor(b->range(16, 16), {4}, DataType::FLOAT32);
  // RAW and WAR: read b[0,4) into c on rank 0, queued there behind the
  // slow [4,8) task; then write b[0,4) on rank 2 (WAR: must wait for that
  // read, or the read sees -1); then read c on rank 1 (RAW).
  auto head = w.remote_tensor(b->range(0, 16), {4}, DataType::FLOAT32);
  auto tc = w.remote_tensor(c->whole(), {4}, DataType::FLOAT32);
  check(lo.ok() && hi.ok() && head.ok() && tc.ok(), "remote_tensor");
  if (!lo.ok() || !hi.ok() || !head.ok() || !tc.ok()) return;
  Status s = w.run([&](Orchestrator& o) -> Status {
    TASKRING_RETURN_IF_ERROR(submit_step(o, id.step, *lo, 2, 10.0f, 0.0f, 300));       // b[0,6) *= 10, slowly
    TASKRING_RETURN_IF_ERROR(submit_step(o, id.step, *hi, 0, 1.0f, 1.0f, 300));        // b[4,8) += 1, slowly
    TASKRING_RETURN_IF_ERROR(submit_step(o, id.step, *head, 0, 1.0f, 0.0f, 0, &*tc));  // c = b[0,4)
    TASKRING_RETURN_IF_ERROR(submit_step(o, id.step, *head, 2, 0.0f, -1.0f, 0));       // b[0,4) = -1 (WAR)
    return submit_step(o, id.step, *tc, 1, 2.0f, 0.0f, 0);                             // c *= 2 (RAW on c)
  });
  check(s.ok(), "deps run: " + s.to_string());
  std::vector<float> vb = read(w, *b), vc = read(w, *c);
  const std::vector<float> want_b = {-1, -1, -1, -1, 51, 61, 8, 9};
  const std::vector<float> want_c = {20, 40, 60, 80};
  std::string got;
  for (float f : vb) got += std::to_string(static_cast<int>(f)) + " ";
  got += "| ";
  for (float f : vc) got += std::to_string(static_cast<int>(f)) + " ";
  check(vb == want_b && vc == want_c, "dependency order violated: got " + got);
}

void scenario_fail(NetWorker& w, const Ids& id) {
  auto b = w.remote_malloc(2, 64);
  check(b.ok(), "remote_malloc");
  if (!b.ok()) return;
  auto t = w.remote_tensor(b->whole(), {16}, DataType::FLOAT32);
  Status s = w.run([&](Orchestrator& o) -> Status {
    ChipTaskArgs a;
    a.add_inout(*t);
    TASKRING_RETURN_IF_ERROR(o.submit_next_level(id.fail, a, 2));
    return submit_step(o, id.step, *t, 1, 1.0f, 1.0f, 0);  // consumer: skipped
  });
  std::printf("failure text: %s\n", s.to_string().c_str());
  check(!s.ok(), "the run with a failing remote task succeeded");
  check(s.code() == StatusCode::kInternal, "the task's own code is kept: " + s.to_string());
  check(contains(s.message(), "rank 2") && contains(s.message(), "node task 'fail'") && contains(s.message(), "SUB") &&
            contains(s.message(), "deliberate failure in the SUB function"),
        "error text not chained through the levels: " + s.to_string());
  // A node error longer than kMaxErrorBytes is cut on its hop.
  Status cut = w.run([&](Orchestrator& o) {
    ChipTaskArgs a;
    a.add_input(*t);
    return o.submit_next_level(id.long_error, a, 1);
  });
  check(contains(cut.message(), "[truncated]") && contains(cut.message(), "rank 1") &&
            cut.message().size() < kMaxErrorBytes + 200,
        "long error not truncated per hop (" + std::to_string(cut.message().size()) + " B)");
  Status next = w.run([&](Orchestrator& o) { return submit_step(o, id.step, *t, 2, 1.0f, 1.0f, 0); });
  check(next.ok(), "the next run failed: " + next.to_string());
  std::vector<float> v = read(w, *b);
  check(v[0] == 1.0f, "the next run did not write (" + std::to_string(v[0]) + ")");
}

void scenario_bad_descriptors(NetWorker& w, const Ids& id) {
  auto b = w.remote_malloc(1, 64);
  check(b.ok(), "remote_malloc");
  if (!b.ok()) return;
  auto expect = [&](Status s, const std::string& part, const std::string& what) {
    check(!s.ok() && contains(s.message(), part),
          what + ": expected an error with '" + part + "', got " + s.to_string());
  };
  expect(w.remote_tensor(b->range(32, 64), {16}, DataType::FLOAT32).status(), "leaves", "range past the end");
  expect(w.remote_tensor(RemoteTensor{7, b->buffer_id, 0, 0, 64}, {16}, DataType::FLOAT32).status(), "owner rank 7",
         "owner out of range");
  expect(w.remote_tensor(RemoteTensor{1, 999, 0, 0, 64}, {16}, DataType::FLOAT32).status(), "never allocated",
         "unknown id");
  expect(w.remote_tensor(b->whole(), {8}, DataType::FLOAT32).status(), "shape covers", "shape mismatch");
  expect(w.remote_malloc(5, 64).status(), "rank 5", "malloc on a missing rank");
  auto stale = w.remote_tensor(b->whole(), {16}, DataType::FLOAT32);
  check(stale.ok(), "remote_tensor");
  check(w.remote_free(*b).ok(), "remote_free");
  expect(w.remote_free(*b), "freed", "double free");
  auto again = w.remote_malloc(1, 64);  // reuses the id, next generation
  check(again.ok() && again->buffer_id == b->buffer_id && again->generation != b->generation, "id reuse");
  Status s = w.run([&](Orchestrator& o) { return submit_step(o, id.step, *stale, 1, 1, 1, 0); });
  expect(s, "generation", "stale descriptor at submit");
  float host[16] = {};
  ChipTensor local = make_tensor_external(host, std::initializer_list<uint32_t>{16}.begin(), 1, DataType::FLOAT32);
  s = w.run([&](Orchestrator& o) { return submit_step(o, id.step, local, 1, 1, 1, 0); });
  expect(s, "not a remote tensor", "host pointer as an L4 argument");
  s = w.run([&](Orchestrator& o) {
    auto t = w.remote_tensor(again->whole(), {16}, DataType::FLOAT32);
    return submit_step(o, id.step, *t, 3, 1, 1, 0);
  });
  expect(s, "rank 3 is not in [0, 3)", "task on a missing rank");
  expect(w.remote_malloc(1, 0).status(), "not in [1, 2^32]", "zero-byte buffer");
  expect(w.remote_copy_to(again->whole(), nullptr), "null host pointer", "copy from null");
  expect(w.remote_copy_from(host, RemoteTensor{9, 0, 0, 0, 4}), "owner rank 9", "copy from a missing rank");
  expect(w.remote_copy_from(host, again->range(0, 128)), "leaves", "copy past the buffer");
  // Freeing a buffer while a run that uses it is in flight.
  auto fresh = w.remote_tensor(again->whole(), {16}, DataType::FLOAT32);
  RunHandle h = w.submit([&](Orchestrator& o) { return submit_step(o, id.step, *fresh, 1, 1, 1, 300); });
  expect(w.remote_free(*again), "a run is in flight", "free during a run");
  check(h.wait().ok(), "the slow run");
  check(w.remote_free(*again).ok(), "free after the run");
}

void scenario_kill(NetWorker& w, const Ids& id, int sig) {
  auto b = w.remote_malloc(2, 64);
  auto t = w.remote_tensor(b->whole(), {16}, DataType::FLOAT32);
  std::printf("scenario: rank 2 raises signal %d in a task\n", sig);
  std::fflush(stdout);
  Status s = w.run([&](Orchestrator& o) {
    ChipTaskArgs a;
    a.add_inout(*t);
    return o.submit_next_level(sig == SIGKILL ? id.die : id.stop, a, 2);
  });
  std::printf("run after the lost rank: %s\n", s.to_string().c_str());
  std::fflush(stdout);
}

}  // namespace

// The data path under the worker, on its own (no NetWorker): the owner
// refuses a FETCH (a stale generation), so the requester gets the owner's
// error and cancels the receive it posted before asking; a good FETCH after
// it gets the owner's bytes (the cancelled receive took nothing); a PUT with
// a stale generation is refused too, and a good PUT lands (read back). With
// doorbells (one host) every remote transfer is direct (the calling thread
// drives its MPI requests, data_mover.hpp); `relay` (no doorbells, as
// between hosts) takes none directly: both paths refuse, cancel and move
// the same bytes. Needs MPI_THREAD_MULTIPLE: the main threads meet in a
// barrier while the progress threads run.
int scenario_refused_fetch(bool relay) {
  const std::string name = relay ? "refused_fetch_sliced" : "refused_fetch";
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    std::printf("SCENARIO %s FAIL: MPI_THREAD_MULTIPLE not provided (%d)\n", name.c_str(), provided);
    MPI_Finalize();
    return 1;
  }
  MPI_Comm comm, sync;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_dup(MPI_COMM_WORLD, &sync);
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<char> pool(1 << 16);
  net::BufferTable own(rank, pool.size());
  auto e = own.alloc(256);  // the first buffer: the same id and generation on every rank
  check(e.ok(), "alloc");
  for (int i = 0; i < 256; ++i) pool[e->offset + static_cast<size_t>(i)] = static_cast<char>(rank * 16 + i % 16);
  net::DataMover* mover = nullptr;
  net::Transport t(
      comm, rank, size, [&](int src, net::Msg type, net::Reader& r) { mover->handle(src, type, r); }, 0);
  if (!relay) t.open_doorbells();
  t.set_multiple(true);
  net::DataMover m(t, own, pool.data());
  mover = &m;
  t.start();
  if (rank == 0 && e.ok()) {
    char buf[256] = {};
    Status bad = m.fetch(RemoteTensor{1, e->id, e->generation + 1, 0, 256}, buf, Deadline::after_ms(20000));
    check(!bad.ok() && contains(bad.message(), "generation") && contains(bad.message(), "FETCH from rank 0"),
          "stale FETCH: expected the owner's generation error, got " + bad.to_string());
    for (int round = 0; round < 2; ++round) {
      std::memset(buf, 0, sizeof(buf));
      Status good = m.fetch(RemoteTensor{2 - round, e->id, e->generation, 0, 256}, buf, Deadline::after_ms(20000));
      check(good.ok(), "good FETCH: " + good.to_string());
      bool same = true;
      for (int i = 0; i < 256; ++i) same &= buf[i] == static_cast<char>((2 - round) * 16 + i % 16);
      check(same, "good FETCH from rank " + std::to_string(2 - round) + ": wrong bytes");
    }
    char put[256];
    for (int i = 0; i < 256; ++i) put[i] = static_cast<char>(100 + i % 7);
    Status bad_put = m.put(RemoteTensor{1, e->id, e->generation + 1, 0, 256}, put, Deadline::after_ms(20000));
    check(!bad_put.ok() && contains(bad_put.message(), "generation") && contains(bad_put.message(), "PUT from rank 0"),
          "stale PUT: expected the owner's generation error, got " + bad_put.to_string());
    Status good_put = m.put(RemoteTensor{1, e->id, e->generation, 0, 256}, put, Deadline::after_ms(20000));
    check(good_put.ok(), "good PUT: " + good_put.to_string());
    std::memset(buf, 0, sizeof(buf));
    Status back = m.fetch(RemoteTensor{1, e->id, e->generation, 0, 256}, buf, Deadline::after_ms(20000));
    check(back.ok() && std::memcmp(buf, put, sizeof(put)) == 0, "the PUT's bytes read back: " + back.to_string());
    // 3 FETCHes, 2 PUTs and the read back (the FETCH from rank 2 is remote too).
    const uint64_t want = relay ? 0 : 6;
    check(m.direct_transfers() == want, "direct transfers: " + std::to_string(m.direct_transfers()) + ", expected " +
                                            std::to_string(want));
  }
  MPI_Barrier(sync);  // the owners serve until rank 0 is done
  t.stop();
  check(t.left_at_stop() == 0, "rank " + std::to_string(rank) + ": " + std::to_string(t.left_at_stop()) +
                                   " MPI request(s) still in flight at stop (the refused FETCH's receive?)");
  t.close_doorbells();
  MPI_Comm_free(&sync);
  MPI_Comm_free(&comm);
  MPI_Finalize();
  if (g_failures == 0) std::printf("SCENARIO %s PASS\n", name.c_str());
  std::fflush(stdout);
  return g_failures ? 1 : 0;
}

int main(int argc, char** argv) {
  g_scenario = argc > 1 ? argv[1] : "roundtrip";
  // "<scenario>_sliced": the same with NetConfig::fast_paths off (no
  // doorbells, no direct channels: the path of ranks on other hosts).
  bool sliced = false;
  if (g_scenario.size() > 7 && g_scenario.ends_with("_sliced")) {
    sliced = true;
    g_scenario.resize(g_scenario.size() - 7);
  }
  const int launcher = std::getenv("OMPI_COMM_WORLD_RANK") ? std::atoi(std::getenv("OMPI_COMM_WORLD_RANK")) : 0;
  NetConfig cfg;
  cfg.node.chips = 0;
  cfg.node.sub_workers = 1;
  cfg.node.shared_bytes = 1 << 20;
  cfg.node.heap_ring_bytes = 1 << 20;
  cfg.pool_bytes = 4 << 20;
  cfg.staging_bytes = 4 << 20;
  cfg.startup_timeout_ms = 60000;
  cfg.peer_timeout_ms = g_scenario == "stop" ? 1500 : 20000;
  cfg.abort_grace_ms = 500;
  if (g_scenario == "refused_fetch") return scenario_refused_fetch(sliced);
  cfg.fast_paths = !sliced;
  if (g_scenario == "protocol" && launcher == 1) cfg.protocol_version = 99;
  if (g_scenario == "node_init" && launcher == 1)
    cfg.node.child_init = [](node::ChildKind, int) { return unavailable("deliberate init failure of the SUB"); };
  if (g_scenario == "slow_node") {
    // One deadline for the tree: rank 1's SUB child hangs in its init.
    cfg.startup_timeout_ms = 6000;
    if (launcher == 1)
      cfg.node.child_init = [](node::ChildKind, int) {
        std::this_thread::sleep_for(std::chrono::seconds(30));
        return Status::Ok();
      };
  }
  NetWorker w(cfg);
  Ids id;
  int sub = *w.node().register_sub("affine", affine);
  int fail_sub = *w.node().register_sub("fail", failing_sub);
  id.step = *w.register_task("step", [sub](NodeWorker& n, const ChipTaskArgs& a) {
    return n.run([&](Orchestrator& o) { return o.submit_sub(sub, a); });
  });
  id.fail = *w.register_task("fail", [fail_sub](NodeWorker& n, const ChipTaskArgs& a) {
    return n.run([&](Orchestrator& o) { return o.submit_sub(fail_sub, a); });
  });
  id.long_error = *w.register_task(
      "long_error", [](NodeWorker&, const ChipTaskArgs&) { return internal_error("long: " + std::string(5000, 'e')); });
  id.die = *w.register_task("die", [](NodeWorker&, const ChipTaskArgs&) {
    raise(SIGKILL);
    return Status::Ok();
  });
  id.stop = *w.register_task("stop", [](NodeWorker&, const ChipTaskArgs&) {
    raise(SIGSTOP);
    return Status::Ok();
  });
  if (g_scenario == "callables" && launcher == 2)
    (void)w.register_task("extra", [](NodeWorker&, const ChipTaskArgs&) { return Status::Ok(); });

  Status init = w.init();
  const bool startup_scenario =
      g_scenario == "protocol" || g_scenario == "callables" || g_scenario == "node_init" || g_scenario == "slow_node";
  if (startup_scenario) {
    const std::string want = g_scenario == "protocol"    ? "rank 1 speaks L4 protocol 99"
                             : g_scenario == "callables" ? "rank 2"
                                                         : "rank 1";
    const std::string want2 = g_scenario == "protocol"    ? "protocol"
                              : g_scenario == "callables" ? "extra"
                              : g_scenario == "node_init" ? "deliberate init failure"
                                                          : "not READY within startup_timeout_ms=4500";
    std::printf("rank %d init: %s\n", launcher, init.to_string().c_str());
    if (launcher == 0 && g_scenario == "slow_node") {
      // Rank 1's node fails at its share of the deadline; whether its HELLO
      // still makes the rest of the deadline depends on how fast MPI starts.
      check(!init.ok() && (contains(init.message(), "rank 1 (pid") || contains(init.message(), "rank(s) 1 ")) &&
                (contains(init.message(), want2) || contains(init.message(), "no HELLO")),
            "init should fail naming rank 1's node or its missing HELLO");
    } else if (launcher == 0) {
      check(!init.ok() && contains(init.message(), want) && contains(init.message(), want2),
            "init should fail naming '" + want + "' and '" + want2 + "'");
    } else if (init.ok() || !contains(init.message(), want)) {
      ++g_failures;
    }
    // Printed before close(): after a missed deadline close() ends the job
    // with MPI_Abort (a rank that never answered makes MPI_Finalize unsafe).
    if (launcher == 0 && g_failures == 0) std::printf("SCENARIO %s PASS\n", g_scenario.c_str());
    std::fflush(stdout);
    Status c = w.close();
    if (!c.ok()) ++g_failures;
    return g_failures ? 1 : 0;
  }
  if (!init.ok()) {
    std::printf("rank %d: init failed: %s\n", launcher, init.to_string().c_str());
    return 1;
  }
  if (w.rank() != 0) {
    if (g_scenario == "roundtrip") {  // only rank 0 drives
      Status r = w.run([](Orchestrator&) { return Status::Ok(); });
      if (r.ok() || !contains(r.message(), "only rank 0")) {
        std::printf("SCENARIO %s FAIL: run() on rank %d: %s\n", g_scenario.c_str(), w.rank(), r.to_string().c_str());
        ++g_failures;
      }
    }
    Status s = w.serve();
    if (!s.ok()) std::printf("rank %d: serve: %s\n", w.rank(), s.to_string().c_str());
    Status c = w.close();
    return s.ok() && c.ok() && g_failures == 0 ? 0 : 1;
  }
  if (g_scenario == "roundtrip")
    scenario_roundtrip(w, id);
  else if (g_scenario == "deps")
    scenario_deps(w, id);
  else if (g_scenario == "fail")
    scenario_fail(w, id);
  else if (g_scenario == "bad_descriptors")
    scenario_bad_descriptors(w, id);
  else if (g_scenario == "kill")
    scenario_kill(w, id, SIGKILL);
  else if (g_scenario == "stop")
    scenario_kill(w, id, SIGSTOP);
  else
    check(false, "unknown scenario");
  Status c = w.close();
  check(c.ok(), "close: " + c.to_string());
  if (g_failures == 0) std::printf("SCENARIO %s%s PASS\n", g_scenario.c_str(), sliced ? "_sliced" : "");
  std::fflush(stdout);
  return g_failures ? 1 : 0;
}
