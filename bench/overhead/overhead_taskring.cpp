// Per-task overhead of the tmr runtime on sim with empty kernels, in the
// peers' harness (bench/peers/common): one ChipWorker per pattern, created
// untimed; the timed region is one ChipWorker::run (staging, orchestration,
// dependency inference, scheduling, execution, copy-back).
//
// Each slot is its own tensor (a 64-byte buffer of one device allocation), as
// each `depend(slot[k])` is its own address for OpenMP. Tasks are submitted
// in PTO2_SCOPE batches of 1024 so rings recycle, as an orchestration of
// 100k tasks would be written.
//
// Three rows: "taskring" (the default: TASKRING_RUN_INLINE unset, the chip
// times its first runs both ways and keeps the faster, src/chip/run_mode.hpp),
// "taskring-threaded" (TASKRING_RUN_INLINE=0: the orchestrator thread and
// --threads executor threads) and "taskring-inline" (TASKRING_RUN_INLINE=1:
// the calling thread orchestrates and executes, one thread in all).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "common/counter.hpp"
#include "common/harness.hpp"
#include "pto_orchestration_api.h"
#include "taskring/base/clock.hpp"
#include "taskring/chip/chip_worker.hpp"

namespace {

constexpr int kKernel = 0;
constexpr uint32_t kSlotBytes = 64;
constexpr size_t kBatch = 1024;

extern "C" void empty_kernel(int64_t*) { peers::task_body(); }

struct Program {
  peers::Pattern pattern;
  size_t tasks;
};
// The slot descriptors of the last run's slots tensor. Built once per
// pattern, outside the timed repetitions' steady state: the peers pay
// nothing to name a slot (`depend(slot[k])`, a flow-graph node), and
// building 65536 descriptors in every run cost the independent row ~2
// last-level cache misses per task of harness work, not runtime work.
// (A bench-local cache: the orchestration entry has no other place to keep
// state between runs; one orchestration runs at a time.)
const std::vector<ChipTensor>& slot_views(const ChipTensor& slots) {
  static std::vector<ChipTensor> views;
  uint64_t slot_count = slots.buffer.size / kSlotBytes;
  if (views.size() == slot_count && !views.empty() && views[0].buffer.addr == slots.buffer.addr) return views;
  views.assign(slot_count, slots);
  for (uint64_t k = 0; k < slot_count; ++k) {
    views[k].buffer.addr = slots.buffer.addr + k * kSlotBytes;
    views[k].buffer.size = kSlotBytes;
    views[k].shapes[0] = kSlotBytes / 4;
    views[k].refresh_derived();
  }
  return views;
}

// The orchestration entry reads its parameters from scalars, so one entry
// serves every pattern: scalar 0 = pattern, scalar 1 = tasks.
extern "C" void overhead_entry(const ChipTaskArgs& args) {
  const ChipTensor& slots = *args.tensor(0);
  auto pattern = static_cast<peers::Pattern>(args.scalar(0));
  size_t n = args.scalar(1);
  const std::vector<ChipTensor>& slot = slot_views(slots);
  uint64_t slot_count = slot.size();
  for (size_t base = 0; base < n; base += kBatch) {
    PTO2_SCOPE() {
      size_t end = std::min(n, base + kBatch);
      for (size_t i = base; i < end; ++i) {
        CoreTaskArgs a;
        switch (pattern) {
          case peers::Pattern::chain: a.add_inout(slot[0]); break;
          case peers::Pattern::independent: a.add_output(slot[i % slot_count]); break;
          case peers::Pattern::mix8: a.add_input(slot[i % 8]).add_inout(slot[(i + 1) % 8]); break;
          case peers::Pattern::fanout:
            if (i == 0)
              a.add_output(slot[0]);
            else
              a.add_input(slot[0]);
            break;
        }
        rt_submit_aiv_task(kKernel, a);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  peers::Options opts = peers::parse_options(argc, argv, "taskring tmr on sim: per-task overhead, empty kernels",
                                             {"taskring", "taskring-threaded", "taskring-inline"});
  taskring::ChipWorkerConfig wc;
  std::map<std::string, std::string> knobs;
  knobs["TASKRING_SIM_THREADS"] = std::to_string(opts.threads);
  // Ring sizes from the environment reach the worker (experiments on the
  // working set: PTO2_RING_TASK_WINDOW=1024 ...); the config records them.
  for (const char* name : {"PTO2_RING_TASK_WINDOW", "PTO2_RING_HEAP", "PTO2_RING_DEP_POOL"}) {
    if (const char* v = std::getenv(name)) knobs[name] = v;
  }
  wc.env = taskring::map_env(knobs);
  peers::RuntimeInfo info;
  info.runtime = "taskring";
  info.version = "taskring " TASKRING_BENCH_VERSION " tmr sim";
  info.config = {{"executor_threads", opts.threads}, {"scope_batch", kBatch}, {"slot_bytes", kSlotBytes}};
  for (const auto& [k, v] : knobs) {
    if (k.rfind("PTO2_RING_", 0) == 0) info.config[k] = v;
  }

  auto prepare = [&](peers::Pattern pattern, size_t n) -> peers::Rep {
    auto worker = taskring::ChipWorker::create(wc);
    if (!worker.ok()) {
      std::fprintf(stderr, "bench_overhead_taskring: %s\n", worker.status().to_string().c_str());
      std::exit(1);
    }
    std::shared_ptr<taskring::ChipWorker> w(std::move(worker).value());
    taskring::ChipCallable c;
    c.name = "overhead";
    c.entry = overhead_entry;
    c.kernels = {{kKernel, empty_kernel, "", "empty"}};
    int id = *w->register_callable(c);
    // Independent tasks each get their own slot; the others use 8.
    uint64_t slots = pattern == peers::Pattern::independent ? std::min<size_t>(n, 65536) : 8;
    auto dev = w->device().malloc(slots * kSlotBytes, 1024, "overhead slots");
    uint32_t shape = static_cast<uint32_t>(slots * kSlotBytes / 4);
    auto tensor = std::make_shared<ChipTensor>(
        *taskring::try_make_tensor(*dev, slots * kSlotBytes, std::span<const uint32_t>(&shape, 1), DataType::FLOAT32,
                                   false, 0, AddressSpace::DEVICE));
    peers::Rep rep;
    rep.run = [w, id, tensor, pattern, n]() -> uint64_t {
      ChipTaskArgs args;
      args.add_inout(*tensor).add_scalar(static_cast<uint64_t>(pattern)).add_scalar(static_cast<uint64_t>(n));
      uint64_t t0 = taskring::mono_ns();
      auto report = w->run(id, args);
      uint64_t t1 = taskring::mono_ns();
      if (!report.ok()) {
        std::fprintf(stderr, "bench_overhead_taskring: %s\n", report.status().to_string().c_str());
        std::exit(1);
      }
      return t1 - t0;
    };
    rep.teardown = [w, dev] { (void)w->device().free(*dev); };
    return rep;
  };
  info.config["run_mode"] = "picked by the chip";
  int failed = peers::run_patterns(opts, info, prepare);
  knobs["TASKRING_RUN_INLINE"] = "0";
  wc.env = taskring::map_env(knobs);
  info.runtime = "taskring-threaded";
  info.config["run_mode"] = "threaded";
  failed += peers::run_patterns(opts, info, prepare);
  knobs["TASKRING_RUN_INLINE"] = "1";
  wc.env = taskring::map_env(knobs);
  info.runtime = "taskring-inline";
  info.config["executor_threads"] = 0;
  info.config["run_mode"] = "inline";
  return failed + peers::run_patterns(opts, info, prepare);
}
