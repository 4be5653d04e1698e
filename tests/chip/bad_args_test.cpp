// Bad orchestration arguments on both runtimes: each is rejected at the API
// boundary with INVALID_ARGS naming the argument, never a crash (the shape
// {0, 100000, 100000} used to pass validation and then abort with
// std::bad_variant_access where the output was materialised), and the same
// worker then runs a good program.
#include <gtest/gtest.h>

#include "runtime_test_util.hpp"
#include "taskring/chip/graph_api.hpp"

namespace taskring::rtest {
namespace {

class BadArgs : public ::testing::TestWithParam<std::string> {
 protected:
  // Runs `body` with one INOUT int32[8] argument, expects an error containing
  // every string of `parts`, then a good run on the same worker.
  void expect_rejected(std::function<void(const ChipTaskArgs&)> body, std::vector<std::string> parts) {
    Rig rig({}, RuntimeName(GetParam()));
    ASSERT_NE(rig.worker, nullptr);
    InoutArg in;
    auto report = rig.run(std::move(body), in.args);
    ASSERT_FALSE(report.ok()) << "expected an error containing " << parts[0];
    for (const std::string& p : parts) {
      EXPECT_TRUE(contains(report.status().message(), p))
          << "missing '" << p << "' in: " << report.status().to_string();
    }
    std::fill(in.x.begin(), in.x.end(), 1);
    auto good = rig.run(
        [](const ChipTaskArgs& a) {
          CoreTaskArgs t;
          t.add_inout(*a.tensor(0)).add_scalar(4);
          rt_submit_aiv_task(kInc, t);
        },
        in.args);
    ASSERT_TRUE(good.ok()) << "the worker must stay usable: " << good.status().to_string();
    for (int v : in.x) EXPECT_EQ(v, 5);
  }
};

// Zero elements, but the row-major stride of dim 0 (10^10) overflows 32 bits.
TensorCreateInfo zero_sized_overflowing() { return TensorCreateInfo({0, 100000, 100000}, DataType::INT32); }

TEST_P(BadArgs, OutputWhoseStridesOverflowIsRejectedBySubmit) {
  expect_rejected(
      [](const ChipTaskArgs&) {
        TensorCreateInfo ci = zero_sized_overflowing();
        CoreTaskArgs t;
        t.add_output(ci).add_scalar(1);
        rt_submit_aiv_task(kFill, t);
      },
      {"INVALID_ARGS", "rt_submit_task", "argument 0 (OUTPUT)", "stride"});
}

TEST_P(BadArgs, OutputWhoseStridesOverflowIsRejectedByAllocTensors) {
  expect_rejected(
      [](const ChipTaskArgs&) {
        TensorCreateInfo ci = zero_sized_overflowing();
        CoreTaskArgs t;
        t.add_output(ci);
        alloc_tensors(t);
      },
      {"INVALID_ARGS", "alloc_tensors", "argument 0 (OUTPUT)", "stride"});
}

void overflow_body(const GraphTaskArgs& g) {
  TensorCreateInfo ci = zero_sized_overflowing();
  CoreTaskArgs t;
  t.add_input(*g.tensor(0)).add_output(ci).add_scalar(0);
  rt_submit_aiv_task(kAdd, t);
}

TEST_P(BadArgs, OutputWhoseStridesOverflowIsRejectedInsideAGraphBody) {
  // hbg records the body (graph/recording), tmr runs it inline.
  expect_rejected(
      [](const ChipTaskArgs& a) {
        GraphTaskArgs g;
        g.add_inout(*a.tensor(0));
        rt_submit_graph(GRAPH_KEY("overflow"), overflow_body, g);
      },
      {"INVALID_ARGS", "argument 1 (OUTPUT)", "stride"});
}

TEST_P(BadArgs, OutputWhoseByteSizeOverflowsIsRejected) {
  expect_rejected(
      [](const ChipTaskArgs&) {
        TensorCreateInfo ci({4294967295u, 4294967295u}, DataType::INT32);
        CoreTaskArgs t;
        t.add_output(ci).add_scalar(1);
        rt_submit_aiv_task(kFill, t);
      },
      {"INVALID_ARGS", "argument 0 (OUTPUT)", "overflows 64 bits"});
}

TEST_P(BadArgs, RequireSyncStartWithMoreBlocksThanCoresIsCode7) {
  expect_rejected(
      [](const ChipTaskArgs& a) {
        CoreTaskArgs t;
        t.add_inout(*a.tensor(0)).add_scalar(1);
        t.launch_spec.set_block_num(1000);
        t.launch_spec.set_require_sync_start(true);
        rt_submit_aiv_task(kInc, t);
      },
      {"REQUIRE_SYNC_START_INVALID", "require_sync_start task with 1000 blocks"});
}

TEST_P(BadArgs, ElementAccessOnAHostTensorIsRejected) {
  static std::vector<int32_t> host(8, 0);
  expect_rejected(
      [](const ChipTaskArgs&) {
        ChipTensor h = make_tensor_external(host.data(), {8}, DataType::INT32);
        uint32_t idx = 1;
        (void)get_tensor_data<int32_t>(h, 1, &idx);
      },
      {"INVALID_ARGS", "get_tensor_data", "not a device tensor"});
}

TEST_P(BadArgs, ElementAccessWithTheWrongRankIsRejected) {
  expect_rejected(
      [](const ChipTaskArgs& a) {
        uint32_t idx[2] = {0, 0};
        set_tensor_data<int32_t>(*a.tensor(0), 2, idx, 7);
      },
      {"INVALID_ARGS", "set_tensor_data", "index rank 2"});
}

INSTANTIATE_TEST_SUITE_P(Runtimes, BadArgs, ::testing::Values("tmr", "hbg"));

}  // namespace
}  // namespace taskring::rtest
