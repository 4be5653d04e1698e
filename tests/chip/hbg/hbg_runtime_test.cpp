// The host_build_graph runtime: the vector example, named errors before
// launch, and random task graphs that must leave the same bytes as on tmr.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "checksum_kernel.hpp"
#include "pto_orchestration_api.h"
#include "taskring/chip/chip_worker.hpp"
#include "test_kernels.hpp"
#include "test_scale.hpp"

namespace {

using taskring::ChipCallable;
using taskring::ChipWorker;
using taskring::ChipWorkerConfig;

constexpr int kAdd = 0, kAddScalar = 1, kMul = 2, kChecksum = 3;
constexpr uint32_t kRows = 64, kCols = 64;

std::unique_ptr<ChipWorker> make_worker(const std::string& runtime, std::map<std::string, std::string> env = {}) {
  ChipWorkerConfig c;
  c.runtime = runtime;
  c.env = taskring::map_env(std::move(env));
  auto w = ChipWorker::create(c);
  EXPECT_TRUE(w.ok()) << w.status().to_string();
  return w.ok() ? std::move(w).value() : nullptr;
}

std::vector<taskring::KernelBinding> test_kernels() {
  return {{kAdd, taskring::testing::test_add, "", "add"},
          {kAddScalar, taskring::testing::test_add_scalar, "", "add_scalar"},
          {kMul, taskring::testing::test_mul, "", "mul"},
          {kChecksum, taskring::testing::test_checksum, "", "checksum"}};
}

// ---------------------------------------------------------------- vector example

void vector_entry(const ChipTaskArgs& args) {
  const ChipTensor& a = *args.tensor(0);
  const ChipTensor& b = *args.tensor(1);
  const ChipTensor& f = *args.tensor(2);
  TensorCreateInfo ci({kRows, kCols}, DataType::FLOAT32);
  CoreTaskArgs t0;
  t0.add_input(a).add_input(b).add_output(ci);
  TaskOutputTensors r0 = rt_submit_aiv_task(kAdd, t0);
  const ChipTensor& c = r0.get_ref(0);
  PTO2_SCOPE() {
    CoreTaskArgs t1;
    t1.add_input(c).add_output(ci).add_scalar(1.0f);
    TaskOutputTensors r1 = rt_submit_aiv_task(kAddScalar, t1);
    CoreTaskArgs t2;
    t2.add_input(c).add_output(ci).add_scalar(2.0f);
    TaskOutputTensors r2 = rt_submit_aiv_task(kAddScalar, t2);
    CoreTaskArgs t3;
    t3.add_input(r1.get_ref(0)).add_input(r2.get_ref(0)).add_output(ci);
    TaskOutputTensors r3 = rt_submit_aiv_task(kMul, t3);
    CoreTaskArgs t4;
    t4.add_input(r3.get_ref(0)).add_input(c).add_output(f);
    rt_submit_aiv_task(kAdd, t4);
  }
}

TEST(HbgRuntime, VectorExampleIs47WithOneImageCopy) {
  auto w = make_worker("hbg");
  ASSERT_TRUE(w);
  ChipCallable c;
  c.name = "vector_example";
  c.entry = vector_entry;
  c.kernels = test_kernels();
  auto id = w->register_callable(c);
  ASSERT_TRUE(id.ok());
  std::vector<float> a(kRows * kCols, 2.0f), b(kRows * kCols, 3.0f), f(kRows * kCols, 0.0f);
  for (int round = 0; round < 3; ++round) {
    std::fill(f.begin(), f.end(), 0.0f);
    ChipTensor ta = make_tensor_external(a.data(), {kRows, kCols});
    ChipTensor tb = make_tensor_external(b.data(), {kRows, kCols});
    ChipTensor tf = make_tensor_external(f.data(), {kRows, kCols});
    ChipTaskArgs args;
    args.add_input(ta).add_input(tb).add_output(tf);
    auto report = w->run(*id, args);
    ASSERT_TRUE(report.ok()) << report.status().to_string();
    for (size_t i = 0; i < f.size(); ++i) ASSERT_EQ(f[i], 47.0f) << "element " << i;
    EXPECT_EQ(report->stats.tasks_submitted, 5u);
    EXPECT_EQ(report->stats.tasks_completed, 5u);
    EXPECT_EQ(report->graph.image_h2d_calls, 1u);
    EXPECT_EQ(report->h2d_calls, 3u);  // two inputs + the task image
  }
}

TEST(HbgRuntime, UnknownRuntimeNamesBoth) {
  ChipWorkerConfig c;
  c.runtime = "nope";
  auto w = ChipWorker::create(c);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("hbg"), std::string::npos);
}

// ---------------------------------------------------------------- named errors

std::string run_error(const std::string& runtime, taskring::OrchestrationEntry entry, taskring::RunConfig rc = {},
                      std::map<std::string, std::string> env = {}) {
  auto w = make_worker(runtime, std::move(env));
  if (!w) return "no worker";
  ChipCallable c;
  c.name = "errors";
  c.entry = entry;
  c.kernels = test_kernels();
  auto id = w->register_callable(c);
  if (!id.ok()) return id.status().to_string();
  std::vector<float> a(256, 1.0f);
  ChipTensor ta = make_tensor_external(a.data(), {16, 16});
  ChipTaskArgs args;
  args.add_inout(ta);
  auto r = w->run(*id, args, rc);
  return r.ok() ? "" : r.status().to_string();
}

void read_produced(const ChipTaskArgs& args) {
  TensorCreateInfo ci({16, 16});
  CoreTaskArgs t;
  t.add_input(*args.tensor(0)).add_output(ci).add_scalar(1.0f);
  TaskOutputTensors r = rt_submit_aiv_task(kAddScalar, t);
  uint32_t idx[2] = {0, 0};
  (void)get_tensor_data<float>(r.get_ref(0), 2, idx);
}

void read_external(const ChipTaskArgs& args) {
  uint32_t idx[2] = {1, 2};
  float v = get_tensor_data<float>(*args.tensor(0), 2, idx);
  if (v != 1.0f) rt_report_fatal(0, "read %f", v);
}

void initial_value(const ChipTaskArgs& args) {
  TensorCreateInfo ci({16, 16});
  ci.set_initial_value(0.0f);
  CoreTaskArgs t;
  t.add_input(*args.tensor(0)).add_output(ci).add_scalar(1.0f);
  rt_submit_aiv_task(kAddScalar, t);
}

void many_tasks(const ChipTaskArgs& args) {
  for (int i = 0; i < 40; ++i) {
    CoreTaskArgs t;
    t.add_inout(*args.tensor(0));
    rt_submit_dummy_task(t);
  }
}

void big_outputs(const ChipTaskArgs& args) {
  for (int i = 0; i < 8; ++i) {
    TensorCreateInfo ci({256, 256});
    CoreTaskArgs t;
    t.add_output(ci);
    alloc_tensors(t);
  }
  (void)args;
}

TEST(HbgRuntime, GetTensorDataOfATaskOutputFailsAtOnce) {
  std::string e = run_error("hbg", read_produced);
  EXPECT_NE(e.find("get_tensor_data"), std::string::npos) << e;
  EXPECT_NE(e.find("hbg builds the whole run"), std::string::npos) << e;
}

TEST(HbgRuntime, GetTensorDataOfAnEntryTensorWorks) { EXPECT_EQ(run_error("hbg", read_external), ""); }

TEST(HbgRuntime, InitialValueOnRuntimeOutputIsAnError) {
  std::string e = run_error("hbg", initial_value);
  EXPECT_NE(e.find("initial value"), std::string::npos) << e;
}

TEST(HbgRuntime, TaskWindowExhaustionIsNamedBeforeLaunch) {
  taskring::RunConfig rc;
  rc.rings.task_window = {4, 4, 4, 4};
  std::string e = run_error("hbg", many_tasks, rc);
  EXPECT_NE(e.find("PTO2_RING_TASK_WINDOW"), std::string::npos) << e;
}

TEST(HbgRuntime, HeapExhaustionIsNamedBeforeLaunch) {
  taskring::RunConfig rc;
  rc.rings.heap = {65536, 65536, 65536, 65536};
  std::string e = run_error("hbg", big_outputs, rc);
  EXPECT_NE(e.find("PTO2_RING_HEAP"), std::string::npos) << e;
}

// ---------------------------------------------------------------- random DAGs

struct RArg {
  TensorArgType tag;
  int src;  // external index, or 100 + output id
  uint32_t shape[2], off[2];
  bool manual = false;
};
struct RTask {
  int kind = 0;  // 0 kernel, 1 dummy, 2 alloc
  std::vector<RArg> args;
  uint32_t seed = 0;
  int16_t blocks = 1;
  std::vector<int> deps;
};
struct RProg {
  uint32_t rows = 8, cols = 8;
  int nbufs = 3;
  std::vector<RTask> tasks;
  std::vector<int> scope_at;  // task index -> 0 none, 1 begin before, 2 end after
};

const RProg* g_prog = nullptr;

RProg make_prog(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  RProg p;
  p.rows = 2 + pick(8);
  p.cols = 2 + pick(8);
  p.nbufs = 1 + static_cast<int>(pick(4));
  int outputs = 0;
  int ntasks = 3 + static_cast<int>(pick(30));
  for (int i = 0; i < ntasks; ++i) {
    RTask t;
    t.seed = static_cast<uint32_t>(rng());
    int r = static_cast<int>(pick(10));
    t.kind = r == 0 ? 1 : r == 1 ? 2 : 0;
    t.blocks = t.kind == 0 && pick(4) == 0 ? static_cast<int16_t>(1 + pick(3)) : 1;
    int nargs = 1 + static_cast<int>(pick(4));
    for (int k = 0; k < nargs; ++k) {
      RArg a;
      if (t.kind == 2) {
        a.tag = TensorArgType::OUTPUT;
      } else {
        uint32_t tr = pick(10);
        a.tag = tr < 4   ? TensorArgType::INPUT
                : tr < 6 ? TensorArgType::INOUT
                : tr < 8 ? TensorArgType::OUTPUT_EXISTING
                         : TensorArgType::OUTPUT;
      }
      if (a.tag == TensorArgType::OUTPUT) {
        a.src = 100 + outputs++;
        a.shape[0] = 1 + pick(p.rows);
        a.shape[1] = 1 + pick(p.cols);
      } else {
        a.src = (outputs > 0 && pick(2) == 0) ? 100 + static_cast<int>(pick(outputs)) : static_cast<int>(pick(p.nbufs));
        a.shape[0] = 1 + pick(p.rows);
        a.shape[1] = 1 + pick(p.cols);
        a.off[0] = pick(p.rows);
        a.off[1] = pick(p.cols);
      }
      t.args.push_back(a);
    }
    // SPMD blocks only over fresh outputs: blocks of one task must not race.
    for (const RArg& a : t.args) {
      if (a.tag != TensorArgType::INPUT && a.tag != TensorArgType::OUTPUT) t.blocks = 1;
    }
    if (i > 0 && pick(5) == 0) t.deps.push_back(static_cast<int>(pick(i)));
    p.tasks.push_back(t);
  }
  p.scope_at.assign(p.tasks.size(), 0);
  for (size_t i = 0; i + 1 < p.tasks.size(); ++i) {
    if (pick(6) == 0) p.scope_at[i] = 1;
  }
  return p;
}

// Interprets g_prog as submits. Views are clipped to their source.
void random_entry(const ChipTaskArgs& args) {
  const RProg& p = *g_prog;
  std::vector<ChipTensor> outs(256);
  std::vector<bool> have(256, false);
  std::vector<PTO2TaskId> ids;
  std::vector<taskring::ChipTensor> views(8);
  int open = 0;
  for (size_t i = 0; i < p.tasks.size(); ++i) {
    if (p.scope_at[i] == 1) {
      rt_scope_begin();
      ++open;
    }
    const RTask& t = p.tasks[i];
    CoreTaskArgs ta;
    std::vector<TensorCreateInfo> cis(t.args.size());
    uint32_t wmask = 0, rmask = 0, omask = 0;
    int nt = 0;
    for (size_t k = 0; k < t.args.size(); ++k) {
      const RArg& a = t.args[k];
      if (a.tag == TensorArgType::OUTPUT) {
        cis[k] = TensorCreateInfo({a.shape[0], a.shape[1]}, DataType::INT32);
        ta.add_output(cis[k]);
        wmask |= 1u << nt++;
        continue;
      }
      const ChipTensor* base = a.src >= 100 ? (have[a.src - 100] ? &outs[a.src - 100] : nullptr) : args.tensor(a.src);
      if (base == nullptr) base = args.tensor(0);
      uint32_t sh[2] = {std::min(a.shape[0], base->shapes[0]), std::min(a.shape[1], base->shapes[1])};
      uint32_t of[2] = {a.off[0] % (base->shapes[0] - sh[0] + 1), a.off[1] % (base->shapes[1] - sh[1] + 1)};
      views[k] = base->view(std::span<const uint32_t>(sh, 2), std::span<const uint32_t>(of, 2));
      ta.add_tensor(views[k], a.tag);
      if (a.tag == TensorArgType::INPUT) rmask |= 1u << nt;
      if (a.tag == TensorArgType::INOUT) {
        rmask |= 1u << nt;
        wmask |= 1u << nt;
        omask |= 1u << nt;
      }
      if (a.tag == TensorArgType::OUTPUT_EXISTING) wmask |= 1u << nt;
      ++nt;
    }
    std::vector<PTO2TaskId> deps;
    for (int d : t.deps) {
      if (d < static_cast<int>(ids.size()) && ids[d].is_valid()) deps.push_back(ids[d]);
    }
    if (!deps.empty()) ta.set_dependencies(deps.data(), static_cast<int>(deps.size()));
    TaskOutputTensors r;
    if (t.kind == 2) {
      r = alloc_tensors(ta);
    } else if (t.kind == 1) {
      r = rt_submit_dummy_task(ta);
    } else {
      ta.add_scalar(t.seed).add_scalar(wmask).add_scalar(rmask).add_scalar(omask).add_scalar(uint32_t{2});
      ta.launch_spec.set_block_num(t.blocks);
      r = rt_submit_aiv_task(kChecksum, ta);
    }
    ids.push_back(r.task_id());
    int o = 0;
    for (const RArg& a : t.args) {
      if (a.tag != TensorArgType::OUTPUT) continue;
      // Outputs of an alloc / dummy task hold zeros only on tmr; read only
      // kernel-written outputs later.
      if (t.kind == 0) {
        outs[a.src - 100] = r.get_ref(o);
        have[a.src - 100] = true;
      }
      ++o;
    }
    if (open > 0 && i % 3 == 2) {
      rt_scope_end();
      --open;
    }
  }
  while (open-- > 0) rt_scope_end();
}

std::vector<std::vector<uint32_t>> run_random(const std::string& runtime, const RProg& p, std::string* err) {
  g_prog = &p;
  std::vector<std::vector<uint32_t>> bufs(static_cast<size_t>(p.nbufs));
  auto w = make_worker(runtime);
  ChipCallable c;
  c.name = "random";
  c.entry = random_entry;
  c.kernels = test_kernels();
  auto id = w->register_callable(c);
  std::vector<ChipTensor> ts;
  ts.reserve(bufs.size());
  ChipTaskArgs args;
  for (size_t b = 0; b < bufs.size(); ++b) {
    bufs[b].resize(p.rows * p.cols);
    for (size_t k = 0; k < bufs[b].size(); ++k) bufs[b][k] = static_cast<uint32_t>(b * 7919 + k * 31);
    ts.push_back(make_tensor_external(bufs[b].data(), {p.rows, p.cols}, DataType::INT32));
    args.add_inout(ts.back());
  }
  auto r = w->run(*id, args);
  if (!r.ok()) *err = r.status().to_string();
  return bufs;
}

TEST(HbgRuntime, RandomGraphsMatchTmr) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    RProg p = make_prog(seed);
    std::string e1, e2;
    auto a = run_random("tmr", p, &e1);
    auto b = run_random("hbg", p, &e2);
    ASSERT_EQ(e1, "") << "seed " << seed;
    ASSERT_EQ(e2, "") << "seed " << seed;
    ASSERT_EQ(a, b) << "seed " << seed;
  }
}

}  // namespace
