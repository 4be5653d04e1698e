// What tmr and hbg share through src/chip/l2 behaves the same on both:
// the KERNEL_FAILED message names the task, kernel, block and core, and
// rt_log goes through the project logger (TASKRING_LOG_LEVEL applies; hbg used
// to write straight to stderr).
#include <gtest/gtest.h>

#include "runtime_test_util.hpp"
#include "taskring/log/logger.hpp"

namespace taskring::rtest {
namespace {

class EngineParity : public ::testing::TestWithParam<std::string> {
 protected:
  Rig rig{{}, RuntimeName(GetParam())};
  InoutArg in;
};

TEST_P(EngineParity, KernelFailureNamesTaskBlockAndCore) {
  ASSERT_NE(rig.worker, nullptr);
  auto report = rig.run(
      [](const ChipTaskArgs& a) {
        CoreTaskArgs t;
        t.add_inout(*a.tensor(0));
        rt_submit_aiv_task(kFail, t);
      },
      in.args);
  ASSERT_FALSE(report.ok());
  const std::string msg = report.status().message();
  for (const char* part :
       {"KERNEL_FAILED", "task 0:0 kernel 5", "block 0/1", "core ", "code 42", "deliberate failure for the test"}) {
    EXPECT_TRUE(contains(msg, part)) << "missing '" << part << "' in: " << msg;
  }
}

TEST_P(EngineParity, RtLogHonoursTheLoggerThreshold) {
  ASSERT_NE(rig.worker, nullptr);
  const log::Level saved = log::threshold();
  auto run_logging = [&](log::Level threshold) {
    log::set_threshold(threshold);
    ::testing::internal::CaptureStderr();
    auto report = rig.run([](const ChipTaskArgs&) { LOG_WARN("parity-warning-%d", 7); }, in.args);
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(report.ok()) << report.status().to_string();
    return err;
  };
  std::string silenced = run_logging(log::Level::kError);
  std::string shown = run_logging(log::Level::kWarn);
  log::set_threshold(saved);
  EXPECT_FALSE(contains(silenced, "parity-warning-7")) << silenced;
  EXPECT_TRUE(contains(shown, "parity-warning-7")) << shown;
  EXPECT_TRUE(contains(shown, "[WARN]")) << "the project logger's envelope: " << shown;
}

INSTANTIATE_TEST_SUITE_P(Runtimes, EngineParity, ::testing::Values("tmr", "hbg"));

}  // namespace
}  // namespace taskring::rtest
