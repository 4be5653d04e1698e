// Co-resident kernels on sim (issue 16 item 3): the blocks of a
// require_sync_start task start together and the AIC/AIV kernels of a MIX
// block run together, so kernels that wait for each other through
// taskring/kernels/kernel_sync.h make progress with fewer executor threads
// than kernels; a sibling that never signals ends the run with a kernel
// error, never a hang. On both runtimes.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "pto_orchestration_api.h"
#include "taskring/base/knobs.hpp"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/kernels/kernel_sync.h"

namespace taskring {
namespace {

constexpr int32_t kBarrierSum = 1;
constexpr int32_t kFifoProducer = 2;
constexpr int32_t kFifoConsumer = 3;

template <typename T>
T* base(int64_t* args, int i) {
  const auto* t = reinterpret_cast<const ChipTensor*>(static_cast<intptr_t>(args[i]));
  return reinterpret_cast<T*>(static_cast<uintptr_t>(t->buffer.addr)) + t->start_offset;
}
int64_t scalar(int64_t* args, int i) { return args[taskring_kernel_local(args)->tensor_count + i]; }

// Tensors: 0 sync (UINT32[1], zero), 1 shared (INT32[n]), 2 out (INT32[n]).
// Scalar 0: a block that skips the barrier (-1: none). Two rounds: block b
// publishes b+1, everyone meets, everyone sums what all published; then each
// publishes b+100 and meets again before reading. A block that reads before
// all its siblings published gets a short sum.
extern "C" void k_barrier_sum(int64_t* args) {
  KernelLocalContext* ctx = taskring_kernel_local(args);
  uint32_t* sync = base<uint32_t>(args, 0);
  int32_t* shared = base<int32_t>(args, 1);
  int32_t* out = base<int32_t>(args, 2);
  const int n = ctx->block_num;
  const int b = ctx->block_idx;
  if (scalar(args, 0) == b) return;  // the sibling that never arrives
  int64_t sum = 0;
  for (int round = 0; round < 2; ++round) {
    __atomic_store_n(&shared[b], round == 0 ? b + 1 : b + 100, __ATOMIC_RELAXED);
    if (taskring_kernel_barrier(args, sync, static_cast<uint32_t>(n)) != 0) return;
    for (int i = 0; i < n; ++i) sum += __atomic_load_n(&shared[i], __ATOMIC_RELAXED);
    // Nobody overwrites `shared` for the next round before all have read it.
    if (taskring_kernel_barrier(args, sync, static_cast<uint32_t>(n)) != 0) return;
  }
  out[b] = static_cast<int32_t>(sum);
}

// MIX: tensors 0 ctrl (UINT32[2], zero), 1 slots (INT32[depth]), 2 out
// (INT32[count]); scalars 0 count pushed, 1 count popped, 2 depth. The AIC
// kernel pushes i*i for i < pushed; the AIV kernel pops `popped` items.
extern "C" void k_fifo_producer(int64_t* args) {
  uint32_t* ctrl = base<uint32_t>(args, 0);
  int32_t* slots = base<int32_t>(args, 1);
  const auto depth = static_cast<uint32_t>(scalar(args, 2));
  for (int32_t i = 0; i < scalar(args, 0); ++i) {
    int32_t v = i * i;
    if (taskring_kernel_fifo_push(args, ctrl, slots, depth, sizeof v, &v) != 0) return;
  }
}
extern "C" void k_fifo_consumer(int64_t* args) {
  uint32_t* ctrl = base<uint32_t>(args, 0);
  const int32_t* slots = base<int32_t>(args, 1);
  int32_t* out = base<int32_t>(args, 2);
  const auto depth = static_cast<uint32_t>(scalar(args, 2));
  for (int32_t i = 0; i < scalar(args, 1); ++i) {
    if (taskring_kernel_fifo_pop(args, ctrl, slots, depth, sizeof(int32_t), &out[i]) != 0) return;
  }
}

std::function<void(const ChipTaskArgs&)> g_body;  // the current test's orchestration
extern "C" void co_entry(const ChipTaskArgs& args) { g_body(args); }

class CoResident : public ::testing::TestWithParam<const char*> {
 protected:
  // 8 clusters on 2 executor threads: more kernels than threads.
  Expected<RunReport> run(std::function<void(const ChipTaskArgs&)> body, const ChipTaskArgs& args,
                          const std::string& stall_ms = "10000") {
    ChipWorkerConfig wc;
    wc.runtime = GetParam();
    wc.env = map_env({{"TASKRING_SIM_CLUSTERS", "8"},
                      {"TASKRING_SIM_THREADS", "2"},
                      {"TASKRING_STALL_TIMEOUT_MS", stall_ms},
                      {"TASKRING_RUN_TIMEOUT_MS", "60000"}});
    auto w = ChipWorker::create(wc);
    if (!w.ok()) return w.status();
    worker_ = std::move(*w);
    ChipCallable c;
    c.name = "co_resident";
    c.entry = co_entry;
    c.kernels = {{kBarrierSum, k_barrier_sum, "", "barrier_sum"},
                 {kFifoProducer, k_fifo_producer, "", "fifo_producer"},
                 {kFifoConsumer, k_fifo_consumer, "", "fifo_consumer"}};
    auto id = worker_->register_callable(c);
    if (!id.ok()) return id.status();
    g_body = std::move(body);
    return worker_->run(*id, args, RunConfig{});
  }
  std::unique_ptr<ChipWorker> worker_;
};

struct BarrierData {
  explicit BarrierData(int n) : shared(n, 0), out(n, -1) {
    ts = make_tensor_external(sync.data(), {1}, DataType::UINT32);
    th = make_tensor_external(shared.data(), {static_cast<uint32_t>(n)}, DataType::INT32);
    to = make_tensor_external(out.data(), {static_cast<uint32_t>(n)}, DataType::INT32);
    args.add_inout(ts, th, to);
  }
  std::vector<uint32_t> sync = std::vector<uint32_t>(1, 0);
  std::vector<int32_t> shared, out;
  ChipTensor ts, th, to;  // the arguments point at these
  ChipTaskArgs args;
};

// Submits one barrier task of `blocks` blocks of `kernels`.
std::function<void(const ChipTaskArgs&)> barrier_task(int blocks, MixedKernels kernels, int64_t skip = -1) {
  return [=](const ChipTaskArgs& a) {
    PTO2_SCOPE() {
      CoreTaskArgs t;
      t.add_inout(a.tensor(0).ref(), a.tensor(1).ref(), a.tensor(2).ref());
      t.add_scalar(skip);
      t.launch_spec.set_block_num(static_cast<int16_t>(blocks));
      t.launch_spec.set_require_sync_start(true);
      rt_submit_task(kernels, t);
    }
  };
}

TEST_P(CoResident, SyncStartBlocksMeetAtABarrier) {
  for (int blocks : {2, 5, 8}) {
    SCOPED_TRACE("blocks " + std::to_string(blocks));
    BarrierData d(blocks);
    MixedKernels aic;
    aic.aic_kernel_id = kBarrierSum;
    auto r = run(barrier_task(blocks, aic), d.args);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    const int32_t want = blocks * (blocks + 1) / 2 + blocks * (blocks - 1) / 2 + 100 * blocks;
    for (int b = 0; b < blocks; ++b) EXPECT_EQ(d.out[b], want) << "block " << b;
  }
}

TEST_P(CoResident, SyncStartAivBlocksUseEveryAivCore) {
  // An AIV task may have as many blocks as AIV cores (16 here).
  BarrierData d(16);
  auto r = run(barrier_task(16, MixedKernels{INVALID_KERNEL_ID, kBarrierSum, INVALID_KERNEL_ID}), d.args);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  for (int b = 0; b < 16; ++b) EXPECT_EQ(d.out[b], 16 * 17 / 2 + 16 * 15 / 2 + 1600) << "block " << b;
}

TEST_P(CoResident, MoreSyncStartBlocksThanClustersIsCode7) {
  BarrierData d(9);
  MixedKernels aic;
  aic.aic_kernel_id = kBarrierSum;
  auto r = run(barrier_task(9, aic), d.args);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("REQUIRE_SYNC_START_INVALID"), std::string::npos) << r.status().to_string();
  EXPECT_EQ(PTO2_ERROR_REQUIRE_SYNC_START_INVALID, 7);
  for (int b = 0; b < 9; ++b) EXPECT_EQ(d.out[b], -1) << "nothing ran";
}

TEST_P(CoResident, ABlockThatNeverArrivesFailsTheRunAtTheDeadline) {
  BarrierData d(4);
  MixedKernels aic;
  aic.aic_kernel_id = kBarrierSum;
  auto r = run(barrier_task(4, aic, /*skip=*/3), d.args, /*stall_ms=*/"200");
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().message();
  EXPECT_NE(m.find("KERNEL_FAILED"), std::string::npos) << m;
  EXPECT_NE(m.find("no co-resident sibling signalled before the deadline"), std::string::npos) << m;
  // The worker stays usable.
  BarrierData ok(4);
  auto again = run(barrier_task(4, aic), ok.args);
  ASSERT_TRUE(again.ok()) << again.status().to_string();
}

struct FifoData {
  FifoData(int count, int depth) : slots(depth, 0), out(count, -1) {
    tc = make_tensor_external(ctrl.data(), {2}, DataType::UINT32);
    ts = make_tensor_external(slots.data(), {static_cast<uint32_t>(depth)}, DataType::INT32);
    to = make_tensor_external(out.data(), {static_cast<uint32_t>(count)}, DataType::INT32);
    args.add_inout(tc, ts, to);
  }
  std::vector<uint32_t> ctrl = std::vector<uint32_t>(2, 0);
  std::vector<int32_t> slots, out;
  ChipTensor tc, ts, to;  // the arguments point at these
  ChipTaskArgs args;
};

std::function<void(const ChipTaskArgs&)> fifo_task(int pushed, int popped, int depth) {
  return [=](const ChipTaskArgs& a) {
    PTO2_SCOPE() {
      CoreTaskArgs t;
      t.add_inout(a.tensor(0).ref(), a.tensor(1).ref(), a.tensor(2).ref());
      t.add_scalar(pushed, popped, depth);
      MixedKernels mk;
      mk.aic_kernel_id = kFifoProducer;
      mk.aiv0_kernel_id = kFifoConsumer;
      rt_submit_task(mk, t);
    }
  };
}

TEST_P(CoResident, MixAicFeedsAivThroughAFifo) {
  // 200 items through 2 slots: the producer blocks on a full FIFO 99 times.
  FifoData d(200, 2);
  auto r = run(fifo_task(200, 200, 2), d.args);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  for (int i = 0; i < 200; ++i) ASSERT_EQ(d.out[i], i * i) << i;
  EXPECT_EQ(d.ctrl[0], 200u);
  EXPECT_EQ(d.ctrl[1], 200u);
}

TEST_P(CoResident, AConsumerWaitingForAnItemNeverPushedFails) {
  FifoData d(8, 4);
  auto r = run(fifo_task(5, 8, 4), d.args, /*stall_ms=*/"200");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no co-resident sibling signalled"), std::string::npos) << r.status().to_string();
  // The consumer (AIV0, func 3) is the one that gave up; the producer ended.
  EXPECT_NE(r.status().message().find("kernel 3 (kernels{aic=2 aiv0=3 aiv1=-1}"), std::string::npos)
      << r.status().to_string();
}

INSTANTIATE_TEST_SUITE_P(Runtimes, CoResident, ::testing::Values("tmr", "hbg"));

}  // namespace
}  // namespace taskring
