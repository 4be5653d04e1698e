// TASKRING_SANITIZE=tags on chip runs (tmr and hbg, Graph on and off): each
// kind of bug a wrong tag hides fails the run with KERNEL_FAILED naming the
// task, the kernel, the argument, its tag and the byte; correct programs
// pass with the same results as without the checker.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "pto_orchestration_api.h"
#include "sanitize_test_util.hpp"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/chip/graph_api.hpp"

namespace taskring {
namespace {

constexpr int32_t kPoke = 1, kCopy = 2, kPeek = 3;
constexpr int kN = 4096;  // int32 elements per host buffer: 16 KiB, several pages

const ChipTensor& targ(int64_t* args, int i) { return *reinterpret_cast<const ChipTensor*>(args[i]); }
int64_t sarg(int64_t* args, int i) { return args[taskring_kernel_local(args)->tensor_count + i]; }

// t0[s0] = s1, with no bounds check: the bug under test.
extern "C" void sk_poke(int64_t* args) {
  targ(args, 0).data<int32_t>()[sarg(args, 0)] = static_cast<int32_t>(sarg(args, 1));
}
// t1 = t0 (contiguous views of equal size).
extern "C" void sk_copy(int64_t* args) {
  const ChipTensor &a = targ(args, 0), &o = targ(args, 1);
  for (uint64_t i = 0; i < a.numel(); ++i) o.data<int32_t>()[i] = a.data<int32_t>()[i];
}
// t1[0] = the int32 s0 bytes after t0's first element (a tensor it was not passed).
extern "C" void sk_peek(int64_t* args) {
  const auto* p = reinterpret_cast<const volatile int32_t*>(targ(args, 0).data<char>() + sarg(args, 0));
  targ(args, 1).data<int32_t>()[0] = *p;
}

std::function<void(const ChipTaskArgs&)> g_body;
extern "C" void sanitize_entry(const ChipTaskArgs& a) {
  if (g_body) g_body(a);
}

struct Case {
  const char* runtime;
  bool graph;
};
std::string case_name(const ::testing::TestParamInfo<Case>& i) {
  return std::string(i.param.runtime) + (i.param.graph ? "_graph" : "");
}

class Tags : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    ChipCallable c;
    c.name = "sanitize";
    c.entry = sanitize_entry;
    c.kernels = {{kPoke, sk_poke, "", "poke"}, {kCopy, sk_copy, "", "copy"}, {kPeek, sk_peek, "", "peek"}};
    worker_ = sanitize_test::make_worker(
        GetParam().runtime, map_env({{"TASKRING_SANITIZE", "tags"}, {"TASKRING_SIM_CLUSTERS", "2"}}), c, &callable_);
    ASSERT_NE(worker_, nullptr);
  }
  void TearDown() override { g_body = nullptr; }

  // Runs `body` over x (arg 0), y (arg 1), z (arg 2), tagged as given.
  Status run(std::function<void(const ChipTaskArgs&)> body) {
    g_body = std::move(body);
    ChipTaskArgs a;
    a.add_input(tx_).add_inout(ty_).add_output(tz_);
    auto r = worker_->run(callable_, a);
    g_body = nullptr;
    return r.ok() ? Status::Ok() : r.status();
  }
  // One task, inside a Graph when the case says so.
  void submit(int32_t kernel, const CoreTaskArgs& t) { sanitize_test::submit(GetParam().graph, kernel, t); }

  std::vector<int32_t> x_ = std::vector<int32_t>(kN, 1), y_ = std::vector<int32_t>(kN, 2),
                       z_ = std::vector<int32_t>(kN, 0);
  ChipTensor tx_ = make_tensor_external(x_.data(), {static_cast<uint32_t>(kN)}, DataType::INT32);
  ChipTensor ty_ = make_tensor_external(y_.data(), {static_cast<uint32_t>(kN)}, DataType::INT32);
  ChipTensor tz_ = make_tensor_external(z_.data(), {static_cast<uint32_t>(kN)}, DataType::INT32);
  std::unique_ptr<ChipWorker> worker_;
  int callable_ = -1;
};

void expect_violation(const Status& s, std::initializer_list<std::string> parts) {
  sanitize_test::expect_failure_naming(s, {"KERNEL_FAILED", "[TASKRING_SANITIZE=tags]"},
                                       "the run passed; the sanitizer missed the bug");
  sanitize_test::expect_failure_naming(s, parts, "");
}

TEST_P(Tags, CorrectProgramPasses) {
  Status s = run([this](const ChipTaskArgs& a) {
    CoreTaskArgs t;
    t.add_input(*a.tensor(0)).add_output(*a.tensor(2));
    submit(kCopy, t);
    CoreTaskArgs u;
    u.add_inout(*a.tensor(1)).add_scalar(5).add_scalar(9);
    submit(kPoke, u);
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(z_[0], 1);
  EXPECT_EQ(z_[kN - 1], 1);
  EXPECT_EQ(y_[5], 9);
}

TEST_P(Tags, WriteOfAnInputIsCaught) {
  Status s = run([this](const ChipTaskArgs& a) {
    CoreTaskArgs t;
    t.add_input(*a.tensor(0)).add_scalar(3).add_scalar(7);
    submit(kPoke, t);
  });
  expect_violation(s, {"kernel 'poke' (id 1) wrote byte 12 of argument 0 (INPUT)", "which the task may only read"});
}

TEST_P(Tags, WriteOfANoDepArgumentIsCaught) {
  // Two writers tagged NO_DEP race on hardware; the first one fails here.
  Status s = run([this](const ChipTaskArgs& a) {
    for (int k = 0; k < 2; ++k) {
      CoreTaskArgs t;
      t.add_no_dep(*a.tensor(1)).add_scalar(0).add_scalar(k);
      submit(kPoke, t);
    }
  });
  expect_violation(s, {"kernel 'poke' (id 1) wrote byte 0 of argument 0 (NO_DEP)"});
}

TEST_P(Tags, WriteJustPastTheViewIsCaught) {
  Status s = run([this](const ChipTaskArgs& a) {
    ChipTensor half = a.tensor(2)->view({kN / 4}, {0});
    CoreTaskArgs t;
    t.add_output(half).add_scalar(kN / 4).add_scalar(1);
    submit(kPoke, t);
  });
  expect_violation(s, {"wrote byte 4096 relative to the view of argument 0 (OUTPUT_EXISTING), past its end "
                       "(the view is 4096 bytes)"});
}

TEST_P(Tags, WritePagesPastTheViewIsCaught) {
  Status s = run([this](const ChipTaskArgs& a) {
    ChipTensor quarter = a.tensor(2)->view({kN / 4}, {0});
    CoreTaskArgs t;
    t.add_output(quarter).add_scalar(3000).add_scalar(1);
    submit(kPoke, t);
  });
  expect_violation(s, {"wrote byte 12000 relative to the view of argument 0 (OUTPUT_EXISTING), past its end"});
}

TEST_P(Tags, ReadOfATensorNotPassedIsCaught) {
  Status s = run([this](const ChipTaskArgs& a) {
    // z's device address relative to x's: the kernel reads z through x.
    const int64_t gap = static_cast<int64_t>(a.tensor(2)->buffer.addr - a.tensor(0)->buffer.addr) + 8192;
    CoreTaskArgs t;
    t.add_input(*a.tensor(0)).add_output(*a.tensor(1)).add_scalar(static_cast<uint64_t>(gap));
    submit(kPeek, t);
  });
  // Named relative to the nearest argument, with the device address.
  expect_violation(s, {"kernel 'peek' (id 3) read byte ", "relative to the view of argument ",
                       "outside that tensor's buffer at device address 0x", "no argument of the task covers it"});
}

INSTANTIATE_TEST_SUITE_P(Runtimes, Tags, ::testing::Values(Case{"tmr", false}, Case{"hbg", false}, Case{"hbg", true}),
                         case_name);

}  // namespace
}  // namespace taskring
