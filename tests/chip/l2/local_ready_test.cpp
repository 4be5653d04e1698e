// Per-executor ready queues (l2/local_ready.hpp): the consumers one
// completion makes ready stay on the completing executor (the first as its
// immediate successor, the rest in its own queue), and an idle executor
// must steal from that queue. Here two consumers of one producer meet at a
// barrier: the executor that runs the first waits inside it, so the run
// finishes only if the other executor takes the second from the first
// one's queue. Without the steal the barrier ends at the stall deadline
// with a kernel error. On both runtimes.
#include <gtest/gtest.h>

#include <string>

#include "pto_orchestration_api.h"
#include "taskring/base/knobs.hpp"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/kernels/kernel_sync.h"

namespace taskring {
namespace {

constexpr int32_t kProducer = 1;
constexpr int32_t kMeet = 2;

// Words the kernels and the orchestration of one run share (sim kernels run
// in this process); reset by the test before each run, one run at a time.
struct MeetWords {
  uint32_t gate = 0;  // set by the orchestration once both consumers are submitted
  uint32_t meet = 0;  // the two consumers' barrier
  uint32_t met[2] = {0, 0};
};
MeetWords g_words;

int64_t scalar(int64_t* args, int i) { return args[taskring_kernel_local(args)->tensor_count + i]; }

// Holds its consumers back until both are submitted (tmr runs the
// orchestration concurrently), so its completion is what readies them.
extern "C" void k_producer(int64_t* args) { (void)taskring_kernel_wait_u32(args, &g_words.gate, 1); }

extern "C" void k_meet(int64_t* args) {
  if (taskring_kernel_barrier(args, &g_words.meet, 2) != 0) return;
  __atomic_store_n(&g_words.met[scalar(args, 0) & 1], 1u, __ATOMIC_RELEASE);
}

extern "C" void meet_entry(const ChipTaskArgs& a) {
  PTO2_SCOPE() {
    CoreTaskArgs p;
    p.add_inout(a.tensor(0).ref());
    rt_submit_aiv_task(kProducer, p);
    for (int64_t i = 0; i < 2; ++i) {
      CoreTaskArgs c;
      c.add_input(a.tensor(0).ref());
      c.add_scalar(i);
      rt_submit_aiv_task(kMeet, c);
    }
  }
  taskring_kernel_signal_u32(&g_words.gate, 1);
}

class LocalReady : public ::testing::TestWithParam<const char*> {};

TEST_P(LocalReady, AConsumerQueuedOnABusyExecutorIsStolenByAnIdleOne) {
  ChipWorkerConfig wc;
  wc.runtime = GetParam();
  wc.env = map_env({{"TASKRING_SIM_CLUSTERS", "4"},
                    {"TASKRING_SIM_THREADS", "2"},
                    {"TASKRING_STALL_TIMEOUT_MS", "5000"},
                    {"TASKRING_RUN_TIMEOUT_MS", "60000"}});
  auto w = ChipWorker::create(wc);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  ChipCallable c;
  c.name = "meet";
  c.entry = meet_entry;
  c.kernels = {{kProducer, k_producer, "", "producer"}, {kMeet, k_meet, "", "meet"}};
  auto id = (*w)->register_callable(c);
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    g_words = MeetWords{};
    uint32_t x = 0;
    ChipTensor tx = make_tensor_external(&x, {1}, DataType::UINT32);
    ChipTaskArgs args;
    args.add_inout(tx);
    auto r = (*w)->run(*id, args, RunConfig{});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->stats.tasks_completed, 3u);
    EXPECT_EQ(g_words.met[0], 1u);
    EXPECT_EQ(g_words.met[1], 1u);
  }
}

INSTANTIATE_TEST_SUITE_P(Runtimes, LocalReady, ::testing::Values("tmr", "hbg"));

}  // namespace
}  // namespace taskring
