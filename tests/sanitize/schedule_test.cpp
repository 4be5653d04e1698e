// TASKRING_SANITIZE=schedule on chip runs (tmr and hbg, Graph on and off): a
// dependency the tags do not declare makes some schedule's output differ from
// the reference run's, and the run fails naming the argument, the byte, the
// seed and the tasks that wrote it; correct programs pass every schedule.
//
// The races are made wide on purpose (the first writer sleeps 50 ms), so
// that any run with two or more executors shows them whatever the machine's
// load; the reference run has one executor (TASKRING_SIM_THREADS=1) and runs
// the tasks in submission order.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "pto_orchestration_api.h"
#include "sanitize_test_util.hpp"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/chip/graph_api.hpp"

namespace taskring {
namespace {

constexpr int32_t kSet = 1, kAddOne = 2, kCopy = 3;
constexpr int kN = 256;

const ChipTensor& targ(int64_t* args, int i) { return *reinterpret_cast<const ChipTensor*>(args[i]); }
int64_t sarg(int64_t* args, int i) { return args[taskring_kernel_local(args)->tensor_count + i]; }

// Sleeps s1 ms, then t0[:] = s0.
extern "C" void ss_set(int64_t* args) {
  std::this_thread::sleep_for(std::chrono::milliseconds(sarg(args, 1)));
  const ChipTensor& t = targ(args, 0);
  for (uint64_t i = 0; i < t.numel(); ++i) t.data<int32_t>()[i] = static_cast<int32_t>(sarg(args, 0));
}
// Sleeps s0 ms, then t0[:] += 1.
extern "C" void ss_add_one(int64_t* args) {
  std::this_thread::sleep_for(std::chrono::milliseconds(sarg(args, 0)));
  const ChipTensor& t = targ(args, 0);
  for (uint64_t i = 0; i < t.numel(); ++i) t.data<int32_t>()[i] += 1;
}
// t1 = t0.
extern "C" void ss_copy(int64_t* args) {
  const ChipTensor &a = targ(args, 0), &o = targ(args, 1);
  for (uint64_t i = 0; i < a.numel(); ++i) o.data<int32_t>()[i] = a.data<int32_t>()[i];
}

std::function<void()> g_body;
const ChipTaskArgs* g_args = nullptr;
extern "C" void schedule_entry(const ChipTaskArgs& a) {
  g_args = &a;
  if (g_body) g_body();
}

struct Case {
  const char* runtime;
  bool graph;
  const char* mode;
};
std::string case_name(const ::testing::TestParamInfo<Case>& i) {
  std::string m = i.param.mode;
  for (char& c : m) c = (c == ',' || c == ':') ? '_' : c;
  return std::string(i.param.runtime) + (i.param.graph ? "_graph_" : "_") + m;
}

class Schedule : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    ChipCallable c;
    c.name = "schedule";
    c.entry = schedule_entry;
    c.kernels = {{kSet, ss_set, "", "set"}, {kAddOne, ss_add_one, "", "add_one"}, {kCopy, ss_copy, "", "copy"}};
    worker_ = sanitize_test::make_worker(GetParam().runtime,
                                         map_env({{"TASKRING_SANITIZE", GetParam().mode},
                                                  {"TASKRING_SIM_THREADS", "1"},
                                                  {"TASKRING_SIM_CLUSTERS", "4"},
                                                  {"TASKRING_SANITIZE_SEED", "11"}}),
                                         c, &callable_);
    ASSERT_NE(worker_, nullptr);
  }
  void TearDown() override { g_body = nullptr; }

  // Runs `body` over x (INOUT, arg 0) and z (OUTPUT_EXISTING, arg 1).
  Status run(std::function<void()> body) {
    g_body = std::move(body);
    ChipTaskArgs a;
    a.add_inout(tx_).add_output(tz_);
    auto r = worker_->run(callable_, a);
    g_body = nullptr;
    return r.ok() ? Status::Ok() : r.status();
  }
  // One task, inside a Graph when the case says so (a Graph per kernel).
  void submit(int32_t kernel, const CoreTaskArgs& t) { sanitize_test::submit(GetParam().graph, kernel, t); }
  const ChipTensor& x() const { return *g_args->tensor(0); }
  const ChipTensor& z() const { return *g_args->tensor(1); }

  std::vector<int32_t> x_ = std::vector<int32_t>(kN, 0), z_ = std::vector<int32_t>(kN, 0);
  ChipTensor tx_ = make_tensor_external(x_.data(), {static_cast<uint32_t>(kN)}, DataType::INT32);
  ChipTensor tz_ = make_tensor_external(z_.data(), {static_cast<uint32_t>(kN)}, DataType::INT32);
  std::unique_ptr<ChipWorker> worker_;
  int callable_ = -1;
};

void expect_mismatch(const Status& s, std::initializer_list<std::string> parts) {
  sanitize_test::expect_failure_naming(s, parts, "every schedule agreed; the fuzzer missed the race");
  sanitize_test::expect_failure_naming(s, {"TASKRING_SANITIZE_SEED="}, "");
}

TEST_P(Schedule, CorrectProgramPassesEverySchedule) {
  Status s = run([this] {
    for (int k = 0; k < 3; ++k) {
      CoreTaskArgs t;
      t.add_inout(x()).add_scalar(k == 0 ? 20 : 0);
      submit(kAddOne, t);
    }
    CoreTaskArgs c;
    c.add_input(x()).add_output(z());
    submit(kCopy, c);
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(x_[0], 3);
  EXPECT_EQ(z_[kN - 1], 3);
}

TEST_P(Schedule, ConsumerReadingThroughNoDepIsCaught) {
  // x += 1 (slow), then z = x read through NO_DEP: nothing orders the copy
  // after the increment.
  Status s = run([this] {
    CoreTaskArgs inc;
    inc.add_inout(x()).add_scalar(50);
    submit(kAddOne, inc);
    CoreTaskArgs c;
    c.add_no_dep(x()).add_output(z());
    submit(kCopy, c);
  });
  expect_mismatch(s, {"SCHEDULE_MISMATCH",
                      "differs from run 0: entry argument 1 (OUTPUT_EXISTING) byte 0 is 0x01 "
                      "after run 0 and 0x00 after run",
                      "written last by ", "kernel 'copy' (id 3), argument 1 OUTPUT_EXISTING) in run 0"});
}

INSTANTIATE_TEST_SUITE_P(Runtimes, Schedule,
                         ::testing::Values(Case{"tmr", false, "schedule:6"}, Case{"hbg", false, "schedule:6"},
                                           Case{"hbg", true, "schedule:6"}, Case{"tmr", false, "tags,schedule:6"},
                                           Case{"hbg", false, "tags,schedule:6"}),
                         case_name);

// Two writers of the same bytes tagged NO_DEP: the slow first one wins when
// they overlap. Schedule only (the tag checker would stop the first write).
class ScheduleOnly : public Schedule {};

TEST_P(ScheduleOnly, OverlappingNoDepWritersAreCaught) {
  Status s = run([this] {
    CoreTaskArgs a;
    a.add_no_dep(x()).add_scalar(1).add_scalar(50);
    submit(kSet, a);
    CoreTaskArgs b;
    b.add_no_dep(x()).add_scalar(2).add_scalar(0);
    submit(kSet, b);
  });
  expect_mismatch(s, {"entry argument 0 (INOUT) byte 0 is 0x02 after run 0 and 0x01 after run",
                      "kernel 'set' (id 1), argument 0 NO_DEP) in run 0 and by "});
}

INSTANTIATE_TEST_SUITE_P(Runtimes, ScheduleOnly,
                         ::testing::Values(Case{"tmr", false, "schedule"}, Case{"hbg", false, "schedule"},
                                           Case{"hbg", true, "schedule"}),
                         case_name);

}  // namespace
}  // namespace taskring
