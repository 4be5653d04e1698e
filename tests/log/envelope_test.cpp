#include <pthread.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "log_test_util.hpp"
#include "taskring/log/logger.hpp"

namespace taskring::log {
namespace {

using testing::LoggerStateGuard;
using testing::parse_envelope;
using testing::PipeCapture;
using testing::split_lines;

std::string self_hex() {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%lx", static_cast<unsigned long>(pthread_self()));
  return buf;
}

TEST(LogEnvelope, PrefixIsByteExact) {
  char buf[kEnvelopeFixedMax + 16];
  size_t n = format_envelope(buf, 1234567890123ull, Level::kWarn, "my_func");
  EXPECT_EQ(std::string(buf, n), "[mono_ns=1234567890123][T0x" + self_hex() + "][WARN] my_func: ");
  n = format_envelope(buf, UINT64_MAX, Level::kTiming, "f");
  EXPECT_EQ(std::string(buf, n), "[mono_ns=18446744073709551615][T0x" + self_hex() + "][TIMING] f: ");
}

TEST(LogEnvelope, RecordParsesBackWithOneWrite) {
  LoggerStateGuard guard;
  set_threshold(Level::kDebug);
  PipeCapture cap;
  ASSERT_TRUE(cap.ok());
  set_output_fd(cap.write_fd());
  uint64_t before = mono_ns();
  uint64_t writes = thread_write_calls();
  EXPECT_TRUE(logf(Level::kInfo, "caller", "value=%d name=%s", 42, "x y"));
  EXPECT_EQ(thread_write_calls() - writes, 1u);
  EXPECT_TRUE(logf(Level::kError, "caller", "ends with newline\n"));
  EXPECT_TRUE(logf(Level::kDebug, "caller", "%s", ""));
  uint64_t after = mono_ns();
  set_output_fd(2);
  bool complete = false;
  std::string text = cap.finish();
  std::vector<std::string> lines = split_lines(text, &complete);
  ASSERT_TRUE(complete);
  ASSERT_EQ(lines.size(), 3u) << text;
  auto e = parse_envelope(lines[0]);
  ASSERT_TRUE(e.has_value()) << lines[0];
  EXPECT_GE(e->mono_ns, before);
  EXPECT_LE(e->mono_ns, after);
  EXPECT_EQ(e->thread_hex, self_hex());
  EXPECT_EQ(e->level, "INFO");
  EXPECT_EQ(e->func, "caller");
  EXPECT_EQ(e->message, "value=42 name=x y");
  EXPECT_EQ(lines[0],
            "[mono_ns=" + std::to_string(e->mono_ns) + "][T0x" + self_hex() + "][INFO] caller: value=42 name=x y");
  auto e1 = parse_envelope(lines[1]);
  ASSERT_TRUE(e1.has_value());
  EXPECT_EQ(e1->level, "ERROR");
  EXPECT_EQ(e1->message, "ends with newline");  // not doubled
  auto e2 = parse_envelope(lines[2]);
  ASSERT_TRUE(e2.has_value());
  EXPECT_EQ(e2->message, "");
}

int g_evaluations = 0;
int count_evaluation() { return ++g_evaluations; }

TEST(LogEnvelope, BelowThresholdNothingIsWrittenOrEvaluated) {
  LoggerStateGuard guard;
  set_threshold(Level::kWarn);
  PipeCapture cap;
  set_output_fd(cap.write_fd());
  g_evaluations = 0;
  uint64_t writes = thread_write_calls();
  TR_LOG_INFO("n=%d", count_evaluation());
  TR_LOG_TIMING("n=%d", count_evaluation());
  TR_LOG_DEBUG("n=%d", count_evaluation());
  EXPECT_FALSE(logf(Level::kInfo, "f", "x"));
  EXPECT_EQ(g_evaluations, 0);
  EXPECT_EQ(thread_write_calls(), writes);
  set_threshold(Level::kNul);
  TR_LOG_ERROR("n=%d", count_evaluation());
  EXPECT_EQ(g_evaluations, 0);
  set_output_fd(2);
  EXPECT_EQ(cap.finish(), "");
}

TEST(LogEnvelope, MacrosCarryFileLineAndFunction) {
  LoggerStateGuard guard;
  set_threshold(Level::kDebug);
  PipeCapture cap;
  set_output_fd(cap.write_fd());
  const int line = __LINE__ + 1;
  TR_LOG_WARN("x=%d", 5);
  TR_LOG_ERROR("no args");
  TR_LOG_DEBUG("d");
  TR_LOG_INFO("i");
  set_output_fd(2);
  std::vector<std::string> lines = split_lines(cap.finish());
  ASSERT_EQ(lines.size(), 4u);
  auto e = parse_envelope(lines[0]);
  ASSERT_TRUE(e.has_value()) << lines[0];
  EXPECT_EQ(e->level, "WARN");
  EXPECT_EQ(e->func, "TestBody");
  EXPECT_EQ(e->message, "[envelope_test.cpp:" + std::to_string(line) + "] x=5");
  auto e1 = parse_envelope(lines[1]);
  ASSERT_TRUE(e1.has_value());
  EXPECT_EQ(e1->message, "[envelope_test.cpp:" + std::to_string(line + 1) + "] no args");
  EXPECT_EQ(parse_envelope(lines[2])->level, "DEBUG");
  EXPECT_EQ(parse_envelope(lines[3])->level, "INFO");
}

TEST(LogEnvelope, LongRecordsUseTheHeapAndStillOneWrite) {
  LoggerStateGuard guard;
  set_threshold(Level::kDebug);
  for (size_t len : {2000u, 2100u, 3000u, 4500u, 20000u}) {
    PipeCapture cap;
    set_output_fd(cap.write_fd());
    std::string body(len, 'q');
    body[len / 2] = 'M';
    uint64_t writes = thread_write_calls();
    EXPECT_TRUE(logf(Level::kError, "long_func", "<%s>", body.c_str()));
    EXPECT_EQ(thread_write_calls() - writes, 1u) << len;
    set_output_fd(2);
    bool complete = false;
    std::vector<std::string> lines = split_lines(cap.finish(), &complete);
    ASSERT_TRUE(complete);
    ASSERT_EQ(lines.size(), 1u);
    auto e = parse_envelope(lines[0]);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->message, "<" + body + ">") << len;
  }
}

TEST(LogEnvelope, WriteRecordReportsFailure) {
  LoggerStateGuard guard;
  set_threshold(Level::kDebug);
  set_output_fd(-1);
  EXPECT_FALSE(logf(Level::kError, "f", "lost"));
}

}  // namespace
}  // namespace taskring::log
