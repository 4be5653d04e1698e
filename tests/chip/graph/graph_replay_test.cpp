// Graph replay on hbg (hbg/replay_pool.hpp): a diamond, a wide fan-out and
// multi-block nodes replayed many times with different boundaries and
// scalars equal the same body run as ordinary tasks, bit for bit, at one
// executor (the replay as a loop), two executors and inline; one executor
// runs a replay's nodes in recorded order, and so do two once the
// Definition's mode picker keeps the loop; replays that overlap each get a
// state of their own.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "checksum_kernel.hpp"
#include "run_mode.hpp"
#include "pto_orchestration_api.h"
#include "taskring/chip/chip_worker.hpp"

namespace {

using taskring::ChipCallable;
using taskring::ChipWorker;
using taskring::ChipWorkerConfig;

constexpr int kChecksum = 3;
constexpr int kLog = 4;
constexpr uint32_t kRows = 4, kCols = 64;

// ------------------------------------------------------------ the bodies

enum class Shape { kDiamond, kFanOut, kMultiBlock };
Shape g_shape = Shape::kDiamond;
bool g_graph_on = true;

// One checksum node: reads `in`, writes `out` (INOUT: old values feed the
// new ones); the seed is the boundary scalar, so every replay brings its own.
void checksum_node(const GraphTaskArgs& a, const std::vector<ChipTensor>& in, const ChipTensor& out,
                   int16_t blocks = 1) {
  CoreTaskArgs t;
  uint32_t rmask = 0;
  for (const ChipTensor& x : in) {
    rmask |= 1u << t.tensor_count();
    t.add_input(x);
  }
  const uint32_t w = 1u << t.tensor_count();
  t.add_inout(out);
  // `out` is not in the read mask: the blocks of a multi-block node write
  // disjoint elements of it at once, and each reads only its own old ones.
  t.add_scalar(static_cast<uint64_t>(a.scalar(0))).add_scalar(w).add_scalar(rmask).add_scalar(w);
  t.add_scalar(uint32_t{2});
  t.launch_spec.set_blocks(blocks);
  rt_submit_aiv_task(kChecksum, t);
}

ChipTensor row(const ChipTensor& t, uint32_t r) { return t.view({1, kCols}, {r, 0}); }
ChipTensor cell(const ChipTensor& t, uint32_t r, uint32_t c) { return t.view({1, 1}, {r, c}); }

// Boundary: tensor 0 (INOUT, kRows x kCols), scalar 0 (the seed).
void body(const GraphTaskArgs& a) {
  const ChipTensor& b = *a.tensor(0);
  switch (g_shape) {
    case Shape::kDiamond:  // row 0 -> rows 1, 2 -> row 3
      checksum_node(a, {}, row(b, 0));
      checksum_node(a, {row(b, 0)}, row(b, 1));
      checksum_node(a, {row(b, 0)}, row(b, 2));
      checksum_node(a, {row(b, 1), row(b, 2)}, row(b, 3));
      break;
    case Shape::kFanOut:  // cell (0,0) -> 191 other cells -> row 3 reads rows 1..2 (fan-in 128)
      checksum_node(a, {}, cell(b, 0, 0));
      for (uint32_t r = 0; r < 3; ++r)
        for (uint32_t c = 0; c < kCols; ++c)
          if (r != 0 || c != 0) checksum_node(a, {cell(b, 0, 0)}, cell(b, r, c));
      checksum_node(a, {b.view({2, kCols}, {1, 0})}, row(b, 3));
      break;
    case Shape::kMultiBlock:  // the diamond, its middle nodes of 3 blocks each (claimed block by block)
      checksum_node(a, {}, row(b, 0));
      checksum_node(a, {row(b, 0)}, row(b, 1), 3);
      checksum_node(a, {row(b, 0)}, row(b, 2), 3);
      checksum_node(a, {row(b, 1), row(b, 2)}, row(b, 3));
      break;
  }
}

// Entry: tensors 0..2 are three buffers; call i replays the body on buffer
// kPattern[i] (so a state is rebound, then finds the same boundary again)
// with seed 1000 + i.
constexpr int kCalls = 12;
constexpr int kPattern[kCalls] = {0, 0, 1, 0, 2, 2, 2, 1, 0, 1, 1, 0};

void entry(const ChipTaskArgs& args) {
  for (int i = 0; i < kCalls; ++i) {
    GraphTaskArgs g;
    g.add_inout(*args.tensor(kPattern[i]));
    g.add_scalar(uint64_t{1000} + static_cast<uint64_t>(i));
    if (g_graph_on) {
      rt_submit_graph(GRAPH_KEY("replay_test"), body, g);
    } else {
      body(g);
    }
  }
}

// Independent calls: call i on buffer i only, so replays may overlap.
void independent_entry(const ChipTaskArgs& args) {
  for (int i = 0; i < args.tensor_count(); ++i) {
    GraphTaskArgs g;
    g.add_inout(*args.tensor(i));
    g.add_scalar(uint64_t{7000} + static_cast<uint64_t>(i));
    if (g_graph_on) {
      rt_submit_graph(GRAPH_KEY("replay_independent"), body, g);
    } else {
      body(g);
    }
  }
}

// ------------------------------------------------------------ running

std::unique_ptr<ChipWorker> worker(std::map<std::string, std::string> env) {
  ChipWorkerConfig c;
  c.runtime = "hbg";
  env["TASKRING_RUN_TIMEOUT_MS"] = "30000";  // a replay that never ends fails the test, not CI
  c.env = taskring::map_env(std::move(env));
  auto w = ChipWorker::create(c);
  EXPECT_TRUE(w.ok()) << w.status().to_string();
  return std::move(w).value();
}

int register_entry(ChipWorker& w, taskring::OrchestrationEntry e, taskring_kernel_fn log = nullptr) {
  ChipCallable c;
  c.name = "graph_replay_test";
  c.entry = e;
  c.kernels = {{kChecksum, taskring::testing::test_checksum, "", "checksum"}};
  if (log != nullptr) c.kernels.push_back({kLog, log, "", "log"});
  auto id = w.register_callable(c);
  EXPECT_TRUE(id.ok()) << id.status().to_string();
  return *id;
}

// Runs `e` over `buffers` fresh buffers; returns their contents.
std::vector<std::vector<uint32_t>> run(ChipWorker& w, int id, int buffers, uint64_t* replayed = nullptr) {
  std::vector<std::vector<uint32_t>> bufs(static_cast<size_t>(buffers));
  std::vector<ChipTensor> ts;
  ChipTaskArgs args;
  for (int i = 0; i < buffers; ++i) {
    auto& v = bufs[static_cast<size_t>(i)];
    v.resize(kRows * kCols);
    for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<uint32_t>(i * 7919 + k * 31 + 5);
    ts.push_back(make_tensor_external(v.data(), {kRows, kCols}, DataType::INT32));
  }
  for (const ChipTensor& t : ts) args.add_inout(t);
  auto r = w.run(id, args);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  if (r.ok() && replayed != nullptr) *replayed = r->graph.graph_tasks;
  return bufs;
}

const std::vector<std::map<std::string, std::string>> kConfigs = {
    {{"TASKRING_SIM_THREADS", "1"}},  // one executor: the replay is a loop
    {{"TASKRING_SIM_THREADS", "2"}},
    {{"TASKRING_RUN_INLINE", "1"}},
};

std::string name(const std::map<std::string, std::string>& env) {
  std::string s;
  for (const auto& [k, v] : env) s += k + "=" + v + " ";
  return s;
}

void expect_replays_match_ordinary(Shape shape) {
  g_shape = shape;
  for (const auto& env : kConfigs) {
    auto w = worker(env);
    const int id = register_entry(*w, entry);
    g_graph_on = false;
    const auto ref = run(*w, id, 3);
    g_graph_on = true;
    uint64_t replayed = 0;
    EXPECT_EQ(run(*w, id, 3, &replayed), ref) << name(env) << "first run (records)";
    EXPECT_EQ(replayed, static_cast<uint64_t>(kCalls)) << name(env);
    EXPECT_EQ(run(*w, id, 3), ref) << name(env) << "second run (states kept from the first)";
  }
}

TEST(GraphReplay, DiamondReplayedWithOtherBoundariesEqualsOrdinaryRun) {
  expect_replays_match_ordinary(Shape::kDiamond);
}

TEST(GraphReplay, WideFanOutAndFanInEqualOrdinaryRun) { expect_replays_match_ordinary(Shape::kFanOut); }

TEST(GraphReplay, MultiBlockNodesEqualOrdinaryRun) { expect_replays_match_ordinary(Shape::kMultiBlock); }

TEST(GraphReplay, OverlappingReplaysEqualOrdinaryRun) {
  g_shape = Shape::kFanOut;
  auto w = worker({{"TASKRING_SIM_THREADS", "2"}});
  const int id = register_entry(*w, independent_entry);
  constexpr int kBuffers = 24;
  g_graph_on = false;
  const auto ref = run(*w, id, kBuffers);
  g_graph_on = true;
  for (int rep = 0; rep < 3; ++rep) EXPECT_EQ(run(*w, id, kBuffers), ref) << "run " << rep;
}

// ------------------------------------------------------------ node order

std::atomic<int> g_logged{0};
int g_log[256];

std::thread::id g_log_tid[256];

extern "C" void graph_replay_log_kernel(int64_t* args) {
  KernelLocalContext* ctx = taskring_kernel_local(args);
  const int n = g_logged.fetch_add(1);
  if (n < 256) {
    g_log[n] = static_cast<int>(args[ctx->tensor_count]);
    g_log_tid[n] = std::this_thread::get_id();
  }
}

// Node i logs i: 0 -> {1, 2}, 1 -> 3, 2 -> 4, {3, 4} -> 5. A scheduler that
// runs a readied consumer first would run 3 before 2.
void order_body(const GraphTaskArgs& a) {
  const ChipTensor& b = *a.tensor(0);
  auto node = [&](int i, std::vector<uint32_t> reads, uint32_t write) {
    CoreTaskArgs t;
    std::vector<ChipTensor> views;
    for (uint32_t r : reads) views.push_back(cell(b, 0, r));
    for (const ChipTensor& v : views) t.add_input(v);
    ChipTensor w = cell(b, 0, write);
    t.add_inout(w);
    t.add_scalar(static_cast<uint64_t>(i));
    rt_submit_aiv_task(kLog, t);
  };
  node(0, {}, 0);
  node(1, {0}, 1);
  node(2, {0}, 2);
  node(3, {1}, 3);
  node(4, {2}, 4);
  node(5, {3, 4}, 5);
}

void order_entry(const ChipTaskArgs& args) {
  for (int i = 0; i < 4; ++i) {
    GraphTaskArgs g;
    g.add_inout(*args.tensor(0));
    rt_submit_graph(GRAPH_KEY("order"), order_body, g);
  }
}

TEST(GraphReplay, OneExecutorRunsAReplayInRecordedOrder) {
  for (const auto& env : {kConfigs[0], kConfigs[2]}) {
    auto w = worker(env);
    const int id = register_entry(*w, order_entry, graph_replay_log_kernel);
    for (int rep = 0; rep < 2; ++rep) {  // the first run records, both replay
      g_logged = 0;
      run(*w, id, 1);
      ASSERT_EQ(g_logged.load(), 24) << name(env);
      for (int k = 0; k < 24; ++k) EXPECT_EQ(g_log[k], k % 6) << name(env) << "position " << k;
    }
  }
}

// Two executors: replay 0 of a Definition is spread over them, replays 1-7
// run as a loop on one executor (ReplayPool::next_loop), so each runs its
// six nodes in recorded order on one thread; replay 8 is spread again (the
// probe), and the results stay right either way.
TEST(GraphReplay, TwoExecutorsRunALoopableReplayAsALoopUntilTheProbe) {
  static_assert(taskring::RunModePicker::kProbeRun == 8, "replays 1-7 loop");
  auto w = worker({{"TASKRING_SIM_THREADS", "2"}});
  const int id = register_entry(*w, order_entry, graph_replay_log_kernel);
  for (int rep = 0; rep < 3; ++rep) {  // four replays a run: replays 0-11
    g_logged = 0;
    run(*w, id, 1);
    ASSERT_EQ(g_logged.load(), 24);
    for (int r = 0; r < 4; ++r) {
      const int replay = 4 * rep + r;
      if (replay == 0 || replay >= taskring::RunModePicker::kProbeRun) continue;
      for (int k = 0; k < 6; ++k) {
        EXPECT_EQ(g_log[6 * r + k], k) << "replay " << replay << " position " << k;
        EXPECT_EQ(g_log_tid[6 * r + k], g_log_tid[6 * r]) << "replay " << replay << " left its executor";
      }
    }
  }
}

}  // namespace
