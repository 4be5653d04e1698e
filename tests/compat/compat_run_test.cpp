// Runs the upstream-style orchestration libraries of tests/compat/orch on
// both runtimes (tmr and hbg) with the built-in kernels mapped to upstream's
// func ids, and checks the outputs and error codes upstream specifies.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "taskring/chip/chip_worker.hpp"
#include "taskring/kernels/builtin.hpp"

namespace taskring {
namespace {

std::string lib(const std::string& name) { return std::string(TASKRING_COMPAT_ORCH_DIR) + "/lib" + name + ".so"; }

class CompatRun : public ::testing::TestWithParam<const char*> {
 protected:
  // Runs library `name` with kernels 0 add, 1 add_scalar, 2 mul, 3 copy.
  Expected<RunReport> run(const std::string& name, const ChipTaskArgs& args, const RunConfig& config = {}) {
    ChipWorkerConfig wc;
    wc.runtime = GetParam();
    auto w = ChipWorker::create(wc);
    if (!w.ok()) return w.status();
    worker_ = std::move(*w);
    ChipCallable c;
    c.name = name;
    c.orchestration_library = lib(name);
    using namespace kernels;  // the built-in entry points
    c.kernels = {{0, taskring_builtin_add, "", "add"},
                 {1, taskring_builtin_add_scalar, "", "add_scalar"},
                 {2, taskring_builtin_mul, "", "mul"},
                 {3, taskring_builtin_copy, "", "copy"}};
    auto id = worker_->register_callable(c);
    if (!id.ok()) return id.status();
    return worker_->run(*id, args, config);
  }
  std::unique_ptr<ChipWorker> worker_;
};

TEST_P(CompatRun, UpstreamVectorExampleGives47) {
  constexpr uint32_t n = 16384;
  std::vector<float> a(n, 2.0f), b(n, 3.0f), f(n, 0.0f);
  ChipTensor ta = make_tensor_external(a.data(), {n});
  ChipTensor tb = make_tensor_external(b.data(), {n});
  ChipTensor tf = make_tensor_external(f.data(), {n});
  ChipTaskArgs args;
  args.add_input(ta, tb);
  args.add_output(tf);
  auto r = run("compat_vector", args);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(f[i], 47.0f) << i;
  // The config's expected_arg_count is enforced.
  ChipTaskArgs few;
  few.add_input(ta);
  r = run("compat_vector", few);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("expects 3 arguments"), std::string::npos) << r.status().to_string();
}

TEST_P(CompatRun, ApiSurfaceIncludingAFalsePredicate) {
  std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7}, y(8, -1.0f), z(8, 5.0f);
  std::vector<int32_t> flags = {1, 0};
  ChipTensor tx = make_tensor_external(x.data(), {8});
  ChipTensor ty = make_tensor_external(y.data(), {8});
  ChipTensor tflags = make_tensor_external(flags.data(), {2}, DataType::INT32);
  ChipTensor tz = make_tensor_external(z.data(), {8});
  ChipTaskArgs args;
  args.add_input(tx);
  args.add_output(ty);
  args.add_input(tflags);
  args.add_inout(tz);
  args.add_scalar(10.0f);
  auto r = run("compat_api_surface", args);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(y, (std::vector<float>{4, 6, 8, 10, 14, 15, 16, 17}));
  // The predicated-off copy never ran: z[4..8) keeps its previous contents.
  EXPECT_EQ(z, (std::vector<float>{0, 1, 2, 3, 5, 5, 5, 5}));
}

TEST_P(CompatRun, A5SpellingAndSfinaeSelectedSpelling) {
  for (const char* name : {"compat_a5_core_num", "compat_sfinae_a2a3", "compat_sfinae_a5"}) {
    std::vector<float> a(64, 1.5f), b(64, 2.0f), out(64, 0.0f);
    ChipTensor ta = make_tensor_external(a.data(), {64});
    ChipTensor tb = make_tensor_external(b.data(), {64});
    ChipTensor to = make_tensor_external(out.data(), {64});
    ChipTaskArgs args;
    args.add_input(ta, tb);
    args.add_output(to);
    auto r = run(name, args);
    ASSERT_TRUE(r.ok()) << name << ": " << r.status().to_string();
    for (float v : out) ASSERT_EQ(v, 3.5f) << name;
  }
}

TEST_P(CompatRun, TensorDataReadsAndWritesTheElementSize) {
  std::vector<int32_t> out(4, 0);
  float one = 1.0f;
  ChipTensor to = make_tensor_external(out.data(), {4}, DataType::INT32);
  ChipTensor t1 = make_tensor_external(&one, {1});
  ChipTaskArgs args;
  args.add_inout(to);
  args.add_input(t1);
  auto r = run("compat_tensor_data", args);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(out, (std::vector<int32_t>{7, 255, 16256, 256}));
}

TEST_P(CompatRun, MakeTensorExternalWithDefaultAddressSpaceWrapsEntryData) {
  std::vector<float> src = {1, 2, 3, 4}, dst(4, 0.0f);
  ChipTensor ts = make_tensor_external(src.data(), {4});
  ChipTensor td = make_tensor_external(dst.data(), {4});
  ChipTaskArgs args;
  args.add_input(ts);
  args.add_output(td);
  auto r = run("compat_rewrap", args);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(dst, src);
}

TEST_P(CompatRun, OrchestrationReadsEntryDataThroughDataAs) {
  std::vector<int32_t> cfg = {3, 2};
  std::vector<float> x = {1, 2, 3, 4}, y(4, 0.0f);
  ChipTensor tc = make_tensor_external(cfg.data(), {2}, DataType::INT32);
  ChipTensor tx = make_tensor_external(x.data(), {4});
  ChipTensor ty = make_tensor_external(y.data(), {4});
  ChipTaskArgs args;
  args.add_input(tc, tx);
  args.add_output(ty);
  auto r = run("compat_read_config", args);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(y, (std::vector<float>{7, 8, 9, 10}));
  EXPECT_EQ(r->stats.tasks_submitted, 4u);  // 3 add_scalar + copy: the config was read
}

TEST_P(CompatRun, ViewsTakeManualDepFromTheirArgument) {
  std::vector<float> x(16), y(16, 0.0f);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i);
  ChipTensor tx = make_tensor_external(x.data(), {4, 4});
  ChipTensor ty = make_tensor_external(y.data(), {4, 4});
  ChipTaskArgs args;
  args.add_input(tx);
  args.add_inout(ty);
  auto r = run("compat_views", args);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  std::vector<float> want(16, 0.0f);
  want[0] = 5;
  want[1] = 6;
  want[4] = 9;
  want[5] = 10;
  EXPECT_EQ(y, want);
}

// The fatal-code cases of fatal_codes_orch.cpp: the run fails with the code
// upstream uses for the same condition.
TEST_P(CompatRun, ErrorCodesMatchUpstream) {
  struct Case {
    int64_t which;
    const char* name;
  };
  for (Case c : {Case{9, "EXPLICIT_ORCH_FATAL"}, Case{7, "REQUIRE_SYNC_START_INVALID"},
                 Case{2, "HEAP_RING_DEADLOCK"}, Case{5, "INVALID_ARGS"}, Case{90, "EXPLICIT_ORCH_FATAL"}}) {
    std::vector<float> t(16, 0.0f);
    ChipTensor tt = make_tensor_external(t.data(), {16});
    ChipTaskArgs args;
    args.add_inout(tt);
    args.add_scalar(c.which);
    RunConfig rc;
    rc.rings.heap.fill(1024);
    auto r = run("compat_fatal_codes", args, rc);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_NE(r.status().message().find(std::string("': ") + c.name + ": "), std::string::npos)
        << c.name << ": " << r.status().to_string();
    if (c.which == 90) {
      // Only the failing assertion is reported, naming its condition.
      EXPECT_NE(r.status().message().find("always_assert(t.ndims == 7) failed at"), std::string::npos)
          << r.status().to_string();
    }
  }
}

// Nested scopes sharing the last ring fill its window together: upstream's
// flow-control deadlock (3); one scope filling a window alone stays a scope
// deadlock (1, tests/chip/errors_test.cpp). tmr only: hbg has no rings.
TEST(CompatTmr, SharedRingFilledByNestedScopesIsFlowControlDeadlock) {
  ChipWorkerConfig wc;
  auto w = ChipWorker::create(wc);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  ChipCallable c;
  c.name = "compat_fatal_codes";
  c.orchestration_library = lib("compat_fatal_codes");
  c.kernels = {{0, kernels::taskring_builtin_add, "", "add"}};
  auto id = (*w)->register_callable(c);
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  std::vector<float> t(16, 0.0f);
  ChipTensor tt = make_tensor_external(t.data(), {16});
  ChipTaskArgs args;
  args.add_inout(tt);
  args.add_scalar(int64_t{3});
  RunConfig rc;
  rc.rings.task_window.fill(4);
  auto r = (*w)->run(*id, args, rc);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("': FLOW_CONTROL_DEADLOCK: "), std::string::npos) << r.status().to_string();
}

INSTANTIATE_TEST_SUITE_P(Runtimes, CompatRun, ::testing::Values("tmr", "hbg"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

}  // namespace
}  // namespace taskring
