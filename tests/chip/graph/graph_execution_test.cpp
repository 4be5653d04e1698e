// Graph Execution on hbg: record-and-replay equivalence against ordinary
// execution (hbg inline and tmr) over random bodies, boundary-mismatch
// fallback, limits, unrecordable constructs, alloc_tensors in a body,
// replays at other addresses, pinned-arena exhaustion, and release of every
// buffer on healthy and failed paths.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "checksum_kernel.hpp"
#include "l2_runtime.hpp"
#include "pto_orchestration_api.h"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/device/sim_device.hpp"
#include "test_scale.hpp"

namespace {

using taskring::ChipCallable;
using taskring::ChipWorker;
using taskring::ChipWorkerConfig;
using taskring::RunReport;

constexpr int kChecksum = 3;
constexpr int kLayers = 4;                          // Graph calls per run
constexpr int kSlots = 3;                           // per-layer boundary buffers
constexpr uint32_t kLayerScalarBase = 0x5EED0000u;  // boundary scalars: never equal to a literal below

// ---------------------------------------------------------------- random body

struct BArg {
  TensorArgType tag;
  int src;  // boundary slot (0..kSlots-1, kSlots = shared), or 100 + internal output id
  uint32_t shape[2], off[2];
};
struct BTask {
  int kind = 0;  // 0 kernel, 1 dummy, 2 alloc_tensors
  std::vector<BArg> args;
  uint32_t seed;
  bool seed_from_boundary = false;
  int dep = -1;
};
struct Body {
  uint64_t seed = 0;
  uint32_t rows = 4, cols = 4;
  TensorArgType slot_tag[kSlots + 1];
  std::vector<BTask> tasks;
  bool manual_scope = false;
};

const Body* g_body = nullptr;
bool g_graph_on = true;
int g_mode = 0;  // 0 normal; see the failure tests
GraphSubmitResult g_last;
std::vector<GraphSubmitResult> g_results;

Body make_body(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  Body b;
  b.seed = seed;
  b.rows = 2 + pick(6);
  b.cols = 2 + pick(6);
  for (auto& t : b.slot_tag) t = pick(3) == 0 ? TensorArgType::INPUT : TensorArgType::INOUT;
  b.slot_tag[kSlots] = TensorArgType::INPUT;  // shared buffer: read only
  int outputs = 0;
  int n = 1 + static_cast<int>(pick(16));
  for (int i = 0; i < n; ++i) {
    BTask t;
    t.seed = 0x70000000u | static_cast<uint32_t>(rng() & 0xFFFFFF);
    t.seed_from_boundary = pick(3) == 0;
    uint32_t r = pick(10);
    t.kind = r == 0 ? 1 : r == 1 ? 2 : 0;
    int na = 1 + static_cast<int>(pick(4));
    for (int k = 0; k < na; ++k) {
      BArg a{};
      a.shape[0] = 1 + pick(b.rows);
      a.shape[1] = 1 + pick(b.cols);
      a.off[0] = pick(b.rows);
      a.off[1] = pick(b.cols);
      if (t.kind == 2 || (t.kind == 0 && pick(4) == 0)) {
        a.tag = TensorArgType::OUTPUT;
        a.src = 100 + outputs++;
      } else {
        bool internal = outputs > 0 && pick(2) == 0;
        a.src = internal ? 100 + static_cast<int>(pick(outputs)) : static_cast<int>(pick(kSlots + 1));
        bool writable = internal || b.slot_tag[a.src < 100 ? a.src : 0] == TensorArgType::INOUT;
        if (!internal && a.src == kSlots) writable = false;
        uint32_t tr = pick(3);
        a.tag = !writable || tr == 0 ? TensorArgType::INPUT
                : tr == 1            ? TensorArgType::INOUT
                                     : TensorArgType::OUTPUT_EXISTING;
      }
      t.args.push_back(a);
    }
    if (i > 0 && pick(6) == 0) t.dep = static_cast<int>(pick(i));
    b.tasks.push_back(t);
  }
  return b;
}

// The body: interprets g_body against its boundary.
void body_fn(const GraphTaskArgs& args) {
  const Body& b = *g_body;
  std::vector<ChipTensor> outs(64);
  std::vector<bool> have(64, false);
  std::vector<PTO2TaskId> ids;
  std::vector<ChipTensor> views(8);
  for (const BTask& t : b.tasks) {
    CoreTaskArgs ta;
    std::vector<TensorCreateInfo> cis(t.args.size());
    uint32_t wmask = 0, rmask = 0, omask = 0;
    int nt = 0;
    for (size_t k = 0; k < t.args.size(); ++k) {
      const BArg& a = t.args[k];
      if (a.tag == TensorArgType::OUTPUT) {
        cis[k] = TensorCreateInfo({a.shape[0], a.shape[1]}, DataType::INT32);
        ta.add_output(cis[k]);
        wmask |= 1u << nt++;
        continue;
      }
      const ChipTensor* base = a.src >= 100 ? (have[a.src - 100] ? &outs[a.src - 100] : nullptr) : args.tensor(a.src);
      TensorArgType tag = a.tag;
      if (base == nullptr) {  // the producer was an alloc / dummy: read the shared buffer instead
        base = args.tensor(kSlots);
        tag = TensorArgType::INPUT;
      }
      uint32_t sh[2] = {std::min(a.shape[0], base->shapes[0]), std::min(a.shape[1], base->shapes[1])};
      uint32_t of[2] = {a.off[0] % (base->shapes[0] - sh[0] + 1), a.off[1] % (base->shapes[1] - sh[1] + 1)};
      views[k] = base->view(std::span<const uint32_t>(sh, 2), std::span<const uint32_t>(of, 2));
      ta.add_tensor(views[k], tag);
      if (tag == TensorArgType::INPUT) rmask |= 1u << nt;
      if (tag == TensorArgType::INOUT) {
        rmask |= 1u << nt;
        wmask |= 1u << nt;
        omask |= 1u << nt;
      }
      if (tag == TensorArgType::OUTPUT_EXISTING) wmask |= 1u << nt;
      ++nt;
    }
    PTO2TaskId dep[1];
    if (t.dep >= 0 && ids[t.dep].is_valid()) {
      dep[0] = ids[t.dep];
      ta.set_dependencies(dep, 1);
    }
    TaskOutputTensors r;
    if (t.kind == 2) {
      r = alloc_tensors(ta);
    } else if (t.kind == 1) {
      r = rt_submit_dummy_task(ta);
    } else {
      uint64_t seed = t.seed_from_boundary ? args.scalar(0) : t.seed;
      ta.add_scalar(seed).add_scalar(wmask).add_scalar(rmask).add_scalar(omask).add_scalar(uint32_t{2});
      r = rt_submit_aiv_task(kChecksum, ta);
    }
    ids.push_back(r.task_id());
    int o = 0;
    for (const BArg& a : t.args) {
      if (a.tag != TensorArgType::OUTPUT) continue;
      if (t.kind == 0) {
        outs[a.src - 100] = r.get_ref(o);
        have[a.src - 100] = true;
      }
      ++o;
    }
  }
}

// Entry: buffers [layer0 slots..., layer1 slots..., ..., shared]; one Graph
// call per layer with that layer's slots + the shared buffer, then a task
// reading everything so outputs after the Graphs are ordered too.
void layers_entry(const ChipTaskArgs& args) {
  const Body& b = *g_body;
  g_results.clear();
  for (int l = 0; l < kLayers; ++l) {
    GraphTaskArgs g;
    for (int s = 0; s < kSlots; ++s) g.add_tensor(*args.tensor(l * kSlots + s), b.slot_tag[s]);
    g.add_input(*args.tensor(kLayers * kSlots));
    g.add_scalar(uint64_t{kLayerScalarBase + static_cast<uint32_t>(l)});
    if (g_graph_on) {
      g_results.push_back(
          rt_submit_graph(GraphKey{taskring::graph_detail::fnv_str("layers") ^ b.seed, "layers"}, body_fn, g));
    } else {
      body_fn(g);
    }
  }
}

struct Outcome {
  std::string error;
  std::vector<std::vector<uint32_t>> bufs;
  RunReport report;
};

std::vector<std::vector<uint32_t>> initial_bufs(const Body& b) {
  std::vector<std::vector<uint32_t>> bufs(kLayers * kSlots + 1);
  for (size_t i = 0; i < bufs.size(); ++i) {
    bufs[i].resize(b.rows * b.cols);
    for (size_t k = 0; k < bufs[i].size(); ++k) bufs[i][k] = static_cast<uint32_t>(i * 1000003 + k * 17 + b.seed);
  }
  return bufs;
}

Outcome run_once(ChipWorker& w, int id, const Body& b) {
  Outcome o;
  o.bufs = initial_bufs(b);
  std::vector<ChipTensor> ts;
  ts.reserve(o.bufs.size());
  ChipTaskArgs args;
  for (auto& v : o.bufs) {
    ts.push_back(make_tensor_external(v.data(), {b.rows, b.cols}, DataType::INT32));
    args.add_inout(ts.back());
  }
  g_body = &b;
  auto r = w.run(id, args);
  if (!r.ok())
    o.error = r.status().to_string();
  else
    o.report = *r;
  return o;
}

std::unique_ptr<ChipWorker> worker(const std::string& rt, std::map<std::string, std::string> env = {}) {
  ChipWorkerConfig c;
  c.runtime = rt;
  c.env = taskring::map_env(std::move(env));
  auto w = ChipWorker::create(c);
  EXPECT_TRUE(w.ok()) << w.status().to_string();
  return std::move(w).value();
}

int register_entry(ChipWorker& w, taskring::OrchestrationEntry e) {
  ChipCallable c;
  c.name = "graph_test";
  c.entry = e;
  c.kernels = {{kChecksum, taskring::testing::test_checksum, "", "checksum"}};
  auto id = w.register_callable(c);
  EXPECT_TRUE(id.ok());
  return *id;
}

TEST(GraphExecution, RandomBodiesReplayLikeOrdinaryExecution) {
  auto hbg = worker("hbg");
  auto tmr = worker("tmr");
  int hid = register_entry(*hbg, layers_entry);
  int tid = register_entry(*tmr, layers_entry);
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    Body b = make_body(seed);
    g_graph_on = true;
    Outcome on = run_once(*hbg, hid, b);
    ASSERT_EQ(on.error, "") << "seed " << seed;
    EXPECT_EQ(on.report.graph.graph_tasks, static_cast<uint64_t>(kLayers)) << "seed " << seed;
    EXPECT_EQ(on.report.graph.definitions_recorded, 1u);
    EXPECT_EQ(on.report.graph.fallbacks, 0u);
    EXPECT_EQ(on.report.stats.tasks_submitted, static_cast<uint64_t>(kLayers));
    Outcome again = run_once(*hbg, hid, b);  // Definition kept across runs: no record, no upload
    ASSERT_EQ(again.error, "");
    EXPECT_EQ(again.report.graph.definitions_recorded, 0u);
    EXPECT_EQ(again.report.graph.graph_upload_calls, 0u);
    EXPECT_EQ(again.report.graph.arena_h2d_calls, 1u);
    g_graph_on = false;
    Outcome off = run_once(*hbg, hid, b);
    Outcome ref = run_once(*tmr, tid, b);
    g_graph_on = true;
    Outcome tmr_graph = run_once(*tmr, tid, b);  // tmr runs rt_submit_graph inline
    ASSERT_EQ(off.error, "");
    ASSERT_EQ(ref.error, "");
    ASSERT_EQ(tmr_graph.error, "");
    ASSERT_EQ(on.bufs, off.bufs) << "seed " << seed;
    ASSERT_EQ(on.bufs, again.bufs) << "seed " << seed;
    ASSERT_EQ(on.bufs, ref.bufs) << "seed " << seed;
    ASSERT_EQ(on.bufs, tmr_graph.bufs) << "seed " << seed;
  }
}

// Graph calls whose boundary tensors are views of one buffer at a different
// offset each (every test above passes whole buffers at offset 0): a replay
// that kept the first call's view offset would write every layer's window
// into layer 0's. Slot s of layer l is the rows x cols window of big buffer s
// at row l * rows and column l % 2.
void offset_layers_entry(const ChipTaskArgs& args) {
  const Body& b = *g_body;
  g_results.clear();
  for (int l = 0; l < kLayers; ++l) {
    GraphTaskArgs g;
    ChipTensor views[kSlots];
    for (int s = 0; s < kSlots; ++s) {
      const uint32_t row = static_cast<uint32_t>(l) * b.rows, col = static_cast<uint32_t>(l % 2);
      views[s] = args.tensor(s)->view({b.rows, b.cols}, {row, col});
      g.add_tensor(views[s], b.slot_tag[s]);
    }
    g.add_input(*args.tensor(kSlots));
    g.add_scalar(uint64_t{kLayerScalarBase + static_cast<uint32_t>(l)});
    if (g_graph_on) {
      g_results.push_back(
          rt_submit_graph(GraphKey{taskring::graph_detail::fnv_str("offsets") ^ b.seed, "offsets"}, body_fn, g));
    } else {
      body_fn(g);
    }
  }
}

Outcome run_offsets(ChipWorker& w, int id, const Body& b) {
  Outcome o;
  o.bufs.resize(kSlots + 1);
  std::vector<ChipTensor> ts;
  ChipTaskArgs args;
  for (int s = 0; s <= kSlots; ++s) {
    const uint32_t rows = s == kSlots ? b.rows : kLayers * b.rows, cols = s == kSlots ? b.cols : b.cols + 1;
    o.bufs[s].resize(rows * cols);
    for (size_t k = 0; k < o.bufs[s].size(); ++k) o.bufs[s][k] = static_cast<uint32_t>(s * 1000003 + k * 17 + b.seed);
    ts.push_back(make_tensor_external(o.bufs[s].data(), {rows, cols}, DataType::INT32));
  }
  for (const ChipTensor& t : ts) args.add_inout(t);
  g_body = &b;
  auto r = w.run(id, args);
  if (!r.ok())
    o.error = r.status().to_string();
  else
    o.report = *r;
  return o;
}

TEST(GraphExecution, ReplaysAtOtherViewOffsetsLikeOrdinaryExecution) {
  auto hbg = worker("hbg");
  auto tmr = worker("tmr");
  int hid = register_entry(*hbg, offset_layers_entry);
  int tid = register_entry(*tmr, offset_layers_entry);
  for (uint64_t seed = 101; seed <= 115; ++seed) {
    Body b = make_body(seed);
    g_graph_on = true;
    Outcome on = run_offsets(*hbg, hid, b);
    ASSERT_EQ(on.error, "") << "seed " << seed;
    EXPECT_EQ(on.report.graph.graph_tasks, static_cast<uint64_t>(kLayers)) << "seed " << seed;
    EXPECT_EQ(on.report.graph.definitions_recorded, 1u) << "seed " << seed;  // layers 1.. replay it
    EXPECT_EQ(on.report.graph.fallbacks, 0u) << "seed " << seed;
    g_graph_on = false;
    Outcome off = run_offsets(*hbg, hid, b);
    Outcome ref = run_offsets(*tmr, tid, b);
    ASSERT_EQ(off.error, "");
    ASSERT_EQ(ref.error, "");
    ASSERT_EQ(off.bufs, ref.bufs) << "seed " << seed;
    ASSERT_EQ(on.bufs, off.bufs) << "seed " << seed;
  }
  g_graph_on = true;
}

TEST(GraphExecution, OneBulkCopyForAllSubmissionsAndOnePerNewDefinition) {
  auto hbg = worker("hbg");
  int id = register_entry(*hbg, layers_entry);
  Body b = make_body(7);
  g_graph_on = true;
  Outcome o = run_once(*hbg, id, b);
  ASSERT_EQ(o.error, "");
  EXPECT_EQ(o.report.graph.graph_upload_calls, 1u);
  EXPECT_EQ(o.report.graph.arena_h2d_calls, 1u);
  EXPECT_EQ(o.report.graph.arena_submissions, static_cast<uint64_t>(kLayers));
  EXPECT_EQ(o.report.graph.arena_fallback_submissions, 0u);
  // Entry staging (one per buffer) + 1 Definition + 1 arena + 1 task image.
  EXPECT_EQ(o.report.h2d_calls, static_cast<uint64_t>(kLayers * kSlots + 1) + 3u);
}

TEST(GraphExecution, ArenaExhaustionFallsBackPerSubmission) {
  Body b = make_body(11);
  g_graph_on = false;
  auto ref_w = worker("hbg");
  Outcome ref = run_once(*ref_w, register_entry(*ref_w, layers_entry), b);
  g_graph_on = true;
  // One submission is 128 + 4*128 + 8 bytes (rounded to 704): room for two.
  for (const char* bytes : {"1500", "0"}) {
    auto w = worker("hbg", {{"TASKRING_GRAPH_ARENA_BYTES", bytes}});
    Outcome o = run_once(*w, register_entry(*w, layers_entry), b);
    ASSERT_EQ(o.error, "");
    uint64_t in_arena = std::string(bytes) == "0" ? 0 : 2;
    EXPECT_EQ(o.report.graph.arena_submissions, in_arena) << bytes;
    EXPECT_EQ(o.report.graph.arena_fallback_submissions, kLayers - in_arena) << bytes;
    EXPECT_EQ(o.report.graph.arena_h2d_calls, (in_arena ? 1 : 0) + kLayers - in_arena) << bytes;
    EXPECT_EQ(o.bufs, ref.bufs) << bytes;
  }
}

TEST(GraphExecution, InvalidArenaKnobIsNamed) {
  // Knobs are read once, when the worker is created.
  ChipWorkerConfig c;
  c.runtime = "hbg";
  c.env = taskring::map_env({{"TASKRING_GRAPH_ARENA_BYTES", "-5"}});
  auto w = ChipWorker::create(c);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("TASKRING_GRAPH_ARENA_BYTES"), std::string::npos) << w.status().to_string();
}

// ---------------------------------------------------------------- fallback

void mismatch_entry(const ChipTaskArgs& args) {
  const Body& b = *g_body;
  g_results.clear();
  for (int l = 0; l < 3; ++l) {
    GraphTaskArgs g;
    ChipTensor views[kSlots + 1];
    for (int s = 0; s <= kSlots; ++s) {
      const ChipTensor& t = *args.tensor(s == kSlots ? kLayers * kSlots : l * kSlots + s);
      // Call 1 passes a narrower view of slot 0: a shape mismatch.
      views[s] = (l == 1 && s == 0) ? t.view({t.shapes[0], 1}, {0, 0}) : t;
      g.add_tensor(views[s], s == kSlots ? TensorArgType::INPUT : b.slot_tag[s]);
    }
    g.add_scalar(uint64_t{kLayerScalarBase + static_cast<uint32_t>(l)});
    if (g_graph_on)
      g_results.push_back(rt_submit_graph(GRAPH_KEY("mismatch"), body_fn, g));
    else
      body_fn(g);
  }
}

TEST(GraphExecution, BoundaryMismatchRunsOrdinaryTasks) {
  Body b = make_body(5);
  b.cols = std::max<uint32_t>(b.cols, 2);
  auto w = worker("hbg");
  int id = register_entry(*w, mismatch_entry);
  g_graph_on = true;
  Outcome on = run_once(*w, id, b);
  ASSERT_EQ(on.error, "");
  ASSERT_EQ(g_results.size(), 3u);
  EXPECT_TRUE(g_results[0].recorded && g_results[0].replayed);
  EXPECT_TRUE(g_results[1].fallback && !g_results[1].replayed);
  EXPECT_TRUE(g_results[2].replayed && !g_results[2].recorded);
  EXPECT_EQ(on.report.graph.fallbacks, 1u);
  g_graph_on = false;
  Outcome off = run_once(*w, id, b);
  ASSERT_EQ(off.error, "");
  EXPECT_EQ(on.bufs, off.bufs);
}

// ---------------------------------------------------------------- constructs and limits

void dummy_body(const GraphTaskArgs& args) {
  int n = g_mode == 1 ? GRAPH_MAX_NODES + 1 : 2;
  for (int i = 0; i < n; ++i) {
    CoreTaskArgs t;
    t.add_inout(*args.tensor(0));
    rt_submit_dummy_task(t);
  }
}
void cfg_body(const GraphTaskArgs& args, int) { dummy_body(args); }
void nested_body(const GraphTaskArgs& args) { rt_submit_graph(GRAPH_KEY("inner"), dummy_body, args); }
const ChipTensor* g_outside = nullptr;
void outside_tensor_body(const GraphTaskArgs&) {
  CoreTaskArgs t;
  t.add_input(*g_outside);
  rt_submit_dummy_task(t);
}
void mutate_body(const GraphTaskArgs& args) {
  const_cast<GraphTaskArgs&>(args).clear();
  const_cast<GraphTaskArgs&>(args).add_scalar(uint64_t{99});
}
void get_body(const GraphTaskArgs& args) {
  uint32_t idx[2] = {0, 0};
  (void)get_tensor_data<int32_t>(*args.tensor(0), 2, idx);
}
void write_input_body(const GraphTaskArgs& args) {
  CoreTaskArgs t;
  t.add_inout(*args.tensor(1));  // tensor 1 is passed as INPUT
  rt_submit_dummy_task(t);
}
void alloc_body(const GraphTaskArgs& args) {
  TensorCreateInfo ci({4, 4}, DataType::INT32);
  TaskOutputTensors a = alloc_tensors(ci);
  CoreTaskArgs t;
  // Writes the allocation from the boundary, then folds it back.
  t.add_input(*args.tensor(0)).add_output(a.get_ref(0));
  t.add_scalar(uint32_t{0x71234567})
      .add_scalar(uint32_t{2})
      .add_scalar(uint32_t{1})
      .add_scalar(uint32_t{0})
      .add_scalar(uint32_t{2});
  rt_submit_aiv_task(kChecksum, t);
  CoreTaskArgs u;
  u.add_input(a.get_ref(0)).add_inout(*args.tensor(0));
  u.add_scalar(uint32_t{0x72345678})
      .add_scalar(uint32_t{2})
      .add_scalar(uint32_t{3})
      .add_scalar(uint32_t{2})
      .add_scalar(uint32_t{2});
  rt_submit_aiv_task(kChecksum, u);
}
// A node with an explicit dependency on the task that wrote boundary tensor
// 0 outside the body (upstream's graph_execution example does this).
void outside_dep_body(const GraphTaskArgs& args) {
  CoreTaskArgs t;
  t.add_inout(*args.tensor(0));
  PTO2TaskId dep = args.tensor(0)->owner_task_id;
  t.set_dependencies(&dep, 1);
  t.add_scalar(uint32_t{0x73456789})
      .add_scalar(uint32_t{1})
      .add_scalar(uint32_t{1})
      .add_scalar(uint32_t{1})
      .add_scalar(uint32_t{2});
  rt_submit_aiv_task(kChecksum, t);
}
void outside_dep_entry(const ChipTaskArgs& args) {
  TensorCreateInfo ci({4, 4}, DataType::INT32);
  for (int i = 0; i < 2; ++i) {
    PTO2_SCOPE() {
      CoreTaskArgs p;
      p.add_input(*args.tensor(1)).add_output(ci);
      p.add_scalar(uint32_t{0x71234567})
          .add_scalar(uint32_t{2})
          .add_scalar(uint32_t{1})
          .add_scalar(uint32_t{0})
          .add_scalar(uint32_t{2});
      TaskOutputTensors made = rt_submit_aiv_task(kChecksum, p);
      GraphTaskArgs g;
      g.add_inout(made.get_ref(0));
      g_results.push_back(rt_submit_graph(GRAPH_KEY("outside_dep"), outside_dep_body, g));
    }
  }
}

void unbalanced_body(const GraphTaskArgs& args) {
  rt_scope_begin(PTO2ScopeMode::MANUAL);
  rt_scope_begin(PTO2ScopeMode::AUTO);
  (void)args;
}

void constructs_entry(const ChipTaskArgs& args) {
  GraphTaskArgs g;
  g.add_inout(*args.tensor(0)).add_input(*args.tensor(1)).add_scalar(uint64_t{kLayerScalarBase});
  g_outside = args.tensor(2);
  switch (g_mode) {
    case 1: rt_submit_graph(GRAPH_KEY("too_many_nodes"), dummy_body, g); break;
    case 2: rt_submit_graph(GRAPH_KEY("nested"), nested_body, g); break;
    case 3: rt_submit_graph(GRAPH_KEY("outside"), outside_tensor_body, g); break;
    case 4: rt_submit_graph(GRAPH_KEY("mutate"), mutate_body, g); break;
    case 5: rt_submit_graph(GRAPH_KEY("get"), get_body, g); break;
    case 6: rt_submit_graph(GRAPH_KEY("write_input"), write_input_body, g); break;
    case 7:
      for (int i = 0; i < GRAPH_MAX_DEFINITIONS + 1; ++i) rt_submit_graph(GRAPH_KEY("defs"), cfg_body, g, i);
      break;
    case 8: {
      GraphTaskArgs big;
      for (int i = 0; i < GRAPH_MAX_TENSOR_ARGS + 1; ++i) big.add_input(*args.tensor(1));
      rt_submit_graph(GRAPH_KEY("wide"), dummy_body, big);
      break;
    }
    case 9: {
      GraphTaskArgs big;
      big.add_inout(*args.tensor(0));
      for (int i = 0; i < GRAPH_MAX_SCALAR_ARGS + 1; ++i) big.add_scalar(i);
      rt_submit_graph(GRAPH_KEY("scalars"), dummy_body, big);
      break;
    }
    case 10:
      for (int i = 0; i < 3; ++i) rt_submit_graph(GRAPH_KEY("alloc"), alloc_body, g);
      break;
    case 11:
      for (int i = 0; i < 3; ++i) alloc_body(g);
      break;
    case 12: rt_submit_graph(GRAPH_KEY("unbalanced"), unbalanced_body, g); break;
    case 13:
      // 16 distinct Definitions are fine (config values select them).
      for (int i = 0; i < GRAPH_MAX_DEFINITIONS; ++i) rt_submit_graph(GRAPH_KEY("defs"), cfg_body, g, i);
      break;
  }
}

std::string run_construct(const std::string& rt, int mode, std::vector<int32_t>* out = nullptr,
                          RunReport* report = nullptr) {
  g_mode = mode;
  auto w = worker(rt);
  int id = register_entry(*w, constructs_entry);
  std::vector<int32_t> a(16, 5), b(16, 6), c(16, 7);
  ChipTensor ta = make_tensor_external(a.data(), {4, 4}, DataType::INT32);
  ChipTensor tb = make_tensor_external(b.data(), {4, 4}, DataType::INT32);
  ChipTensor tc = make_tensor_external(c.data(), {4, 4}, DataType::INT32);
  ChipTaskArgs args;
  args.add_inout(ta).add_input(tb).add_input(tc);
  auto r = w->run(id, args);
  g_mode = 0;
  if (out) *out = a;
  if (report && r.ok()) *report = *r;
  return r.ok() ? "" : r.status().to_string();
}

TEST(GraphExecution, LimitsAndUnrecordableConstructsAreClearErrors) {
  struct Case {
    int mode;
    const char* expect;
  } cases[] = {{1, "GRAPH_MAX_NODES"},
               {2, "nested rt_submit_graph('inner')"},
               {3, "cannot be classified"},
               {4, "boundary scalar 0 was mutated"},
               {5, "get_tensor_data cannot be recorded"},
               {6, "passed as INPUT"},
               {7, "GRAPH_MAX_DEFINITIONS"},
               {8, "tensor capacity 128"},
               {9, "scalar capacity 64"},
               {12, "AUTO scope inside a MANUAL scope"}};
  for (const Case& c : cases) {
    std::string e = run_construct("hbg", c.mode);
    EXPECT_NE(e.find(c.expect), std::string::npos) << "mode " << c.mode << ": " << e;
    if (c.mode <= 6 || c.mode == 12) {
      EXPECT_NE(e.find("Graph body '"), std::string::npos) << e;
    }
  }
  EXPECT_EQ(run_construct("hbg", 13), "");
}

TEST(GraphExecution, ABodyNodeMayDependOnATaskOutsideTheBody) {
  for (const char* rt : {"hbg", "tmr"}) {
    SCOPED_TRACE(rt);
    g_results.clear();
    auto w = worker(rt);
    int id = register_entry(*w, outside_dep_entry);
    std::vector<int32_t> a(16, 5), b(16, 6);
    ChipTensor ta = make_tensor_external(a.data(), {4, 4}, DataType::INT32);
    ChipTensor tb = make_tensor_external(b.data(), {4, 4}, DataType::INT32);
    ChipTaskArgs args;
    args.add_inout(ta).add_input(tb);
    auto r = w->run(id, args);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    // Both producers and both body nodes ran.
    EXPECT_EQ(r->stats.kernel_calls, 4u);
    if (std::string(rt) == "hbg") {
      // The outside task differs per call, so the body runs as ordinary
      // tasks (which wait for it) on every call, never as a Definition.
      ASSERT_EQ(g_results.size(), 2u);
      EXPECT_TRUE(g_results[0].fallback && !g_results[0].replayed);
      EXPECT_TRUE(g_results[1].fallback && !g_results[1].replayed);
      EXPECT_EQ(r->graph.fallbacks, 2u);
    }
  }
}

TEST(GraphExecution, AllocTensorsInsideABodyRecordsAndReplays) {
  std::vector<int32_t> on, off, ref;
  RunReport rep;
  ASSERT_EQ(run_construct("hbg", 10, &on, &rep), "");
  EXPECT_EQ(rep.graph.graph_tasks, 3u);
  EXPECT_EQ(rep.graph.nodes_recorded, 3u);  // alloc node + two kernels
  EXPECT_EQ(rep.graph.graph_nodes_run, 9u);
  ASSERT_EQ(run_construct("hbg", 11, &off), "");
  ASSERT_EQ(run_construct("tmr", 11, &ref), "");
  EXPECT_EQ(on, off);
  EXPECT_EQ(on, ref);
}

// ---------------------------------------------------------------- release on every path

void releasing_entry(const ChipTaskArgs& args) {
  GraphTaskArgs g;
  g.add_inout(*args.tensor(0)).add_scalar(uint64_t{kLayerScalarBase});
  for (int i = 0; i < 3; ++i) rt_submit_graph(GRAPH_KEY("release"), dummy_body, g);
  if (g_mode == 1) rt_report_fatal(0, "deliberate failure after the Graphs");
}

TEST(GraphExecution, EveryBufferIsReleasedOnHealthyAndFailedPaths) {
  auto cfg = taskring::SimDeviceConfig::from_env(taskring::map_env({}));
  ASSERT_TRUE(cfg.ok());
  auto dev = taskring::create_sim_device(*cfg);
  ASSERT_TRUE(dev.ok());
  taskring::Device& d = **dev;
  {
    taskring::L2RuntimeConfig hc;
    hc.device = &d;
    hc.rings.task_window = {64, 64, 64, 64};
    hc.rings.heap = {1 << 20, 1 << 20, 1 << 20, 1 << 20};
    hc.rings.dep_pool = {64, 64, 64, 64};
    hc.graph_arena_bytes = 500;  // one submission fits, the rest fall back
    auto rt = taskring::create_l2_runtime("hbg", hc);
    ASSERT_TRUE(rt.ok()) << rt.status().to_string();
    std::vector<taskring_kernel_fn> kernels(TASKRING_MAX_FUNC_ID, nullptr);
    auto buf = d.malloc(64, 64, "test buffer");
    ASSERT_TRUE(buf.ok());
    auto t = taskring::try_make_tensor(*buf, 64, std::vector<uint32_t>{16}, DataType::INT32, false, 0,
                                       taskring::AddressSpace::DEVICE);
    ChipTaskArgs args;
    args.add_inout(*t);
    for (int mode : {0, 1, 0}) {
      g_mode = mode;
      taskring::RunRequest req;
      req.entry = releasing_entry;
      req.bind = &framework_bind_runtime;
      req.args = &args;
      req.kernels = kernels.data();
      req.invocation_id = 1;
      ASSERT_TRUE((*rt)->start_run(req).ok());
      ASSERT_TRUE((*rt)->wait_run(taskring::Deadline::after_ms(10000)).ok());
      EXPECT_EQ((*rt)->run_status().ok(), mode == 0) << (*rt)->run_status().to_string();
      EXPECT_EQ((*rt)->graph_stats().arena_fallback_submissions, 2u);
    }
    g_mode = 0;
    ASSERT_TRUE(d.free(*buf).ok());
  }
  EXPECT_EQ(d.counters().pinned_live_bytes, 0u);
  taskring::Status fin = d.finalize();
  EXPECT_TRUE(fin.ok()) << fin.to_string();
}

// ---------------------------------------------------------------- replay completion

// Adds 1 to element 0 of tensor 0 (INOUT), slowly enough that a replay
// completed before its last node would let the next one overlap it.
extern "C" void slow_increment(int64_t* args) {
  auto* v = reinterpret_cast<int32_t*>(static_cast<uintptr_t>(taskring::testing::arg_tensor(args, 0)->data_addr()));
  volatile int32_t spin = 0;
  for (int i = 0; i < 20000; ++i) spin = spin + 1;
  *v = *v + 1;
}
constexpr int kSlowIncrement = 5;
constexpr int kChainNodes = 8;
constexpr int kSinkReplays = 6;

// One isolated node (a root and a sink: done first) beside a chain of
// kChainNodes nodes whose last node is the other sink.
void sinks_body(const GraphTaskArgs& args) {
  CoreTaskArgs lone;
  lone.add_inout(*args.tensor(1));
  rt_submit_aiv_task(kSlowIncrement, lone);
  for (int i = 0; i < kChainNodes; ++i) {
    CoreTaskArgs t;
    t.add_inout(*args.tensor(0));
    rt_submit_aiv_task(kSlowIncrement, t);
  }
}
void sinks_entry(const ChipTaskArgs& args) {
  GraphTaskArgs g;
  g.add_inout(*args.tensor(0)).add_inout(*args.tensor(1));
  for (int i = 0; i < kSinkReplays; ++i) rt_submit_graph(GRAPH_KEY("sinks"), sinks_body, g);
}

TEST(GraphExecution, AReplayEndsWithItsLastSinkNotItsFirst) {
  // A replay's GRAPH task completes when its last sink does; were it to
  // complete with the lone sink, the next replay's chain would overlap this
  // one's and increments would be lost or counted after the run.
  auto w = worker("hbg");
  ChipCallable c;
  c.name = "sinks";
  c.entry = sinks_entry;
  c.kernels = {{kSlowIncrement, slow_increment, "", "slow_increment"}};
  auto id = w->register_callable(c);
  ASSERT_TRUE(id.ok());
  for (int round = 0; round < 3; ++round) {
    std::vector<int32_t> chain(16, 0), lone(16, 0);
    ChipTensor tc = make_tensor_external(chain.data(), {4, 4}, DataType::INT32);
    ChipTensor tl = make_tensor_external(lone.data(), {4, 4}, DataType::INT32);
    ChipTaskArgs args;
    args.add_inout(tc).add_inout(tl);
    auto r = w->run(*id, args);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(chain[0], kSinkReplays * kChainNodes) << "round " << round;
    EXPECT_EQ(lone[0], kSinkReplays) << "round " << round;
    EXPECT_EQ(r->graph.graph_tasks, static_cast<uint64_t>(kSinkReplays));
    EXPECT_EQ(r->graph.graph_nodes_run, static_cast<uint64_t>(kSinkReplays * (kChainNodes + 1)));
    EXPECT_EQ(r->stats.kernel_calls, static_cast<uint64_t>(kSinkReplays * (kChainNodes + 1)));
  }
}

}  // namespace
