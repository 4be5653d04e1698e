// Shared pieces of the tmr runtime tests: INT32 kernels that count their
// invocations and can wait on / raise flags (always with a deadline), a
// trampoline entry that runs a per-test lambda, and a worker rig.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pto_orchestration_api.h"
#include "taskring/chip/chip_worker.hpp"
#include "test_kernels.hpp"

namespace taskring::rtest {

using taskring::testing::arg_tensor;
using taskring::testing::for_each_offset;

inline int32_t* base_i32(const ChipTensor& t) {
  return reinterpret_cast<int32_t*>(static_cast<uintptr_t>(t.buffer.addr));
}

// ---- global test state (reset per test by Rig) ----
inline std::atomic<int> g_flags[32];
inline std::atomic<int> g_seen[32];
inline std::atomic<int> g_calls[TASKRING_MAX_FUNC_ID];
inline std::mutex g_record_mu;
struct Launch {
  int32_t func_id, block_idx, block_num, core_id, core_type, sub_block_id, cluster_count, aiv_count;
};
inline std::vector<Launch> g_launches;

inline void reset_state() {
  for (auto& f : g_flags) f.store(0);
  for (auto& f : g_seen) f.store(-1);
  for (auto& c : g_calls) c.store(0);
  std::lock_guard<std::mutex> lock(g_record_mu);
  g_launches.clear();
}

inline int64_t scalar(int64_t* args, int i) { return args[taskring_kernel_local(args)->tensor_count + i]; }
inline bool in_my_part(uint64_t k, const KernelLocalContext* ctx) {
  return static_cast<int64_t>(k % static_cast<uint64_t>(ctx->block_num)) == ctx->block_idx;
}

// Waits (bounded) until flag `f` is non-zero; false on timeout.
inline bool wait_flag(int f, int timeout_ms = 5000) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (g_flags[f].load(std::memory_order_acquire) == 0) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::yield();
  }
  return true;
}
inline void spin_us(int us) {
  auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < end) std::this_thread::yield();
}

// t0 (written) = s0 at the elements of this block.
extern "C" inline void rk_fill(int64_t* args) {
  KernelLocalContext* ctx = taskring_kernel_local(args);
  g_calls[ctx->func_id].fetch_add(1);
  const ChipTensor& o = *arg_tensor(args, 0);
  int32_t v = static_cast<int32_t>(scalar(args, 0));
  for_each_offset(o, [&](uint64_t k, uint64_t off) {
    if (in_my_part(k, ctx)) base_i32(o)[off] = v;
  });
}

// t1 (written) = t0 + s0, elementwise in view order.
extern "C" inline void rk_add(int64_t* args) {
  KernelLocalContext* ctx = taskring_kernel_local(args);
  g_calls[ctx->func_id].fetch_add(1);
  const ChipTensor &a = *arg_tensor(args, 0), &o = *arg_tensor(args, 1);
  if (a.numel() != o.numel()) {
    taskring_kernel_fail(ctx, TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "rk_add: element counts differ");
    return;
  }
  std::vector<uint64_t> ao;
  for_each_offset(a, [&](uint64_t, uint64_t off) { ao.push_back(off); });
  int32_t s = static_cast<int32_t>(scalar(args, 0));
  for_each_offset(o, [&](uint64_t k, uint64_t off) {
    if (in_my_part(k, ctx)) base_i32(o)[off] = base_i32(a)[ao[k]] + s;
  });
}

// t0 (INOUT) += s0.
extern "C" inline void rk_inc(int64_t* args) {
  KernelLocalContext* ctx = taskring_kernel_local(args);
  g_calls[ctx->func_id].fetch_add(1);
  const ChipTensor& o = *arg_tensor(args, 0);
  int32_t s = static_cast<int32_t>(scalar(args, 0));
  for_each_offset(o, [&](uint64_t k, uint64_t off) {
    if (in_my_part(k, ctx)) base_i32(o)[off] += s;
  });
}

// Step kernel: waits for flag s0 (if >= 0, bounded: fails on timeout),
// spins s4 µs, then acts on its tensors (two: t1 = t0 + s5; one: t0 += s5
// unless s5 is 0, then it touches nothing),
// records flag s2 into g_seen[s3] (if s2 >= 0), then raises flag s1 (if
// >= 0).
extern "C" inline void rk_step(int64_t* args) {
  KernelLocalContext* ctx = taskring_kernel_local(args);
  g_calls[ctx->func_id].fetch_add(1);
  int64_t wait = scalar(args, 0), raise = scalar(args, 1), check = scalar(args, 2), slot = scalar(args, 3);
  int64_t spin = scalar(args, 4), delta = scalar(args, 5);
  if (wait >= 0 && !wait_flag(static_cast<int>(wait))) {
    taskring_kernel_fail(ctx, 9, "rk_step: gate flag never raised");
    return;
  }
  if (spin > 0) spin_us(static_cast<int>(spin));
  if (ctx->tensor_count >= 2) {
    const ChipTensor &a = *arg_tensor(args, 0), &o = *arg_tensor(args, 1);
    std::vector<uint64_t> ao;
    for_each_offset(a, [&](uint64_t, uint64_t off) { ao.push_back(off); });
    for_each_offset(o, [&](uint64_t k, uint64_t off) {
      if (k < ao.size()) base_i32(o)[off] = base_i32(a)[ao[k]] + static_cast<int32_t>(delta);
    });
  } else if (ctx->tensor_count == 1 && delta != 0) {
    const ChipTensor& o = *arg_tensor(args, 0);
    for_each_offset(o, [&](uint64_t, uint64_t off) { base_i32(o)[off] += static_cast<int32_t>(delta); });
  }
  if (check >= 0) g_seen[slot].store(g_flags[check].load(std::memory_order_acquire));
  if (raise >= 0) g_flags[raise].store(1, std::memory_order_release);
}

// Records its launch context.
extern "C" inline void rk_record(int64_t* args) {
  KernelLocalContext* ctx = taskring_kernel_local(args);
  KernelGlobalContext* g = taskring_kernel_global(args);
  g_calls[ctx->func_id].fetch_add(1);
  std::lock_guard<std::mutex> lock(g_record_mu);
  g_launches.push_back(Launch{ctx->func_id, ctx->block_idx, ctx->block_num, ctx->core_id, ctx->core_type,
                              ctx->sub_block_id, g->cluster_count, g->aiv_count});
}

extern "C" inline void rk_fail(int64_t* args) {
  KernelLocalContext* ctx = taskring_kernel_local(args);
  g_calls[ctx->func_id].fetch_add(1);
  taskring_kernel_fail(ctx, 42, "deliberate failure for the test");
}

enum KernelId : int32_t { kFill = 0, kAdd = 1, kInc = 2, kStep = 3, kRecord = 4, kFail = 5, kStep2 = 6, kRecord2 = 7 };

// Adds the six step scalars.
inline CoreTaskArgs& step_scalars(CoreTaskArgs& a, int64_t wait, int64_t raise, int64_t check = -1, int64_t slot = 0,
                                  int64_t spin_us = 0, int64_t delta = 0) {
  return a.add_scalar(wait).add_scalar(raise).add_scalar(check).add_scalar(slot).add_scalar(spin_us).add_scalar(delta);
}

// The orchestration body of the current test.
inline std::function<void(const ChipTaskArgs&)> g_body;
extern "C" inline void rtest_entry(const ChipTaskArgs& args) {
  if (g_body) g_body(args);
}

inline std::vector<KernelBinding> all_kernels() {
  return {{kFill, rk_fill, "", "fill"},   {kAdd, rk_add, "", "add"},           {kInc, rk_inc, "", "inc"},
          {kStep, rk_step, "", "step"},   {kRecord, rk_record, "", "record"},  {kFail, rk_fail, "", "fail"},
          {kStep2, rk_step, "", "step2"}, {kRecord2, rk_record, "", "record2"}};
}

// Which L2 runtime a Rig's worker uses (explicit, so that a braced env map
// can never be read as one).
struct RuntimeName {
  explicit RuntimeName(std::string n) : name(std::move(n)) {}
  std::string name;
};

// Names the L2 runtime of a Rig ("tmr" by default); the spelling the stress
// and random bad-argument suites use.
struct OnRuntime {
  std::string name;
};

struct Rig {
  std::unique_ptr<ChipWorker> worker;
  int callable = -1;

  explicit Rig(std::map<std::string, std::string> env = {}) : Rig(std::move(env), RuntimeName("tmr")) {}
  Rig(const OnRuntime& runtime, std::map<std::string, std::string> env)
      : Rig(std::move(env), RuntimeName(runtime.name)) {}
  Rig(std::map<std::string, std::string> env, const RuntimeName& runtime) {
    reset_state();
    env.emplace("TASKRING_RUN_TIMEOUT_MS", "20000");
    ChipWorkerConfig cfg;
    cfg.runtime = runtime.name;
    cfg.env = map_env(env);
    auto w = ChipWorker::create(cfg);
    EXPECT_TRUE(w.ok()) << w.status().to_string();
    if (!w.ok()) return;
    worker = std::move(w).value();
    ChipCallable c;
    c.name = "rtest";
    c.entry = rtest_entry;
    c.kernels = all_kernels();
    auto id = worker->register_callable(c);
    EXPECT_TRUE(id.ok()) << id.status().to_string();
    if (id.ok()) callable = *id;
  }
  ~Rig() { g_body = nullptr; }

  Expected<RunReport> run(std::function<void(const ChipTaskArgs&)> body, const ChipTaskArgs& args,
                          const RunConfig& rc = {}) {
    g_body = std::move(body);
    return worker->run(callable, args, rc);
  }
};

// One INOUT int32[8] host argument (zeros), ready to pass to Rig::run.
struct InoutArg {
  std::vector<int32_t> x = std::vector<int32_t>(8, 0);
  ChipTensor tensor = make_tensor_external(x.data(), {8}, DataType::INT32);
  ChipTaskArgs args;
  InoutArg() { args.add_inout(tensor); }
  InoutArg(const InoutArg&) = delete;
  InoutArg& operator=(const InoutArg&) = delete;
};

// A small program that must work on any healthy worker: x[i] = 1, then
// x += 2 and y = x + 10 in a nested scope, then get_tensor_data checks.
inline void expect_good_run(Rig& rig, const RunConfig& rc = {}) {
  std::vector<int32_t> x(16, 1), y(16, 0);
  ChipTensor tx = make_tensor_external(x.data(), {16}, DataType::INT32);
  ChipTensor ty = make_tensor_external(y.data(), {16}, DataType::INT32);
  ChipTaskArgs args;
  args.add_inout(tx).add_output(ty);
  int32_t seen = -1;
  auto report = rig.run(
      [&](const ChipTaskArgs& a) {
        const ChipTensor& dx = *a.tensor(0);
        const ChipTensor& dy = *a.tensor(1);
        PTO2_SCOPE() {
          CoreTaskArgs t1;
          t1.add_inout(dx).add_scalar(2);
          rt_submit_aiv_task(kInc, t1);
          CoreTaskArgs t2;
          t2.add_input(dx).add_output(dy).add_scalar(10);
          rt_submit_aiv_task(kAdd, t2);
        }
        uint32_t idx = 5;
        seen = get_tensor_data<int32_t>(dy, 1, &idx);
      },
      args, rc);
  ASSERT_TRUE(report.ok()) << "the worker must stay usable: " << report.status().to_string();
  EXPECT_EQ(seen, 13);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(x[i], 3) << i;
    EXPECT_EQ(y[i], 13) << i;
  }
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// An int32 vector as an external 1-D tensor.
inline ChipTensor ext_i32(std::vector<int32_t>& v) {
  return make_tensor_external(v.data(), {static_cast<uint32_t>(v.size())}, DataType::INT32);
}

// Runs `body` on `rig` (one INOUT int32[8] argument), expects an error whose
// message contains every string of `parts`, then a good run.
inline void expect_error(Rig& rig, std::function<void(const ChipTaskArgs&)> body, std::vector<std::string> parts,
                         const RunConfig& rc = {}) {
  std::vector<int32_t> x(8, 0);
  ChipTensor tx = ext_i32(x);
  ChipTaskArgs args;
  args.add_inout(tx);
  auto report = rig.run(std::move(body), args, rc);
  ASSERT_FALSE(report.ok()) << "expected an error containing " << parts[0];
  for (const std::string& p : parts) {
    EXPECT_TRUE(contains(report.status().message(), p)) << "missing '" << p << "' in: " << report.status().to_string();
  }
  expect_good_run(rig, rc);
}

// The same sizes on all four rings.
inline RunConfig rings(uint64_t window, uint64_t heap, uint64_t pool) {
  RunConfig rc;
  rc.rings.task_window = {window, window, window, window};
  rc.rings.heap = {heap, heap, heap, heap};
  rc.rings.dep_pool = {pool, pool, pool, pool};
  return rc;
}

}  // namespace taskring::rtest
