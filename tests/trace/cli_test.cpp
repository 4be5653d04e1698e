// Runs the built `taskring` binary (TASKRING_BIN) on generated logs and checks
// its exit status and outputs.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "run_log.hpp"

namespace taskring::trace {
namespace {

using testing::Part;
using testing::RunSpec;

class TraceCli : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/taskring-trace-cli-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

  std::string write(const std::string& name, const std::string& content) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  // Runs `taskring <args>` with stdout captured into out_; returns the exit status.
  int run(const std::string& args) {
    std::string out = dir_ + "/stdout.txt";
    std::string cmd = std::string(TASKRING_BIN) + " " + args + " > '" + out + "' 2> '" + dir_ + "/stderr.txt'";
    int st = std::system(cmd.c_str());
    out_ = slurp(out);
    err_ = slurp(dir_ + "/stderr.txt");
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }

  static std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }

  std::string dir_;
  std::string out_;
  std::string err_;
};

TEST_F(TraceCli, ValidRunExitsZero) {
  RunSpec s;
  s.ranks = 8;
  s.dispatches = 10;
  std::string log = write("run.log", run_log(s));
  EXPECT_EQ(run("trace " + log + " --expect-ranks 8 --expect-rounds 8 --warmup 2"), 0) << out_;
  EXPECT_NE(out_.find("trace: OK"), std::string::npos) << out_;
  EXPECT_NE(out_.find("64/64 cells valid"), std::string::npos) << out_;
  EXPECT_EQ(run("trace " + log + " --rounds-table --tree --expect-ranks 8 --expect-rounds 8 --warmup 2"), 0);
  EXPECT_NE(out_.find("Effective [dev]"), std::string::npos);
}

// A log whose only record names an unusable rank: the warning used to be
// followed by `trace: OK — 0/0 cells valid` and exit 0.
TEST_F(TraceCli, EveryRecordDiscardedIsInvalid) {
  testing::SpanRec root;
  root.pid = 1000;
  root.tid = 1001;
  root.name = "chip.run";
  root.ts = 1'000'000'000;
  root.dur = 1000;
  root.attrs = "rank=2147483647";
  std::string log = write("one.log", testing::strace(root) + "\n");
  EXPECT_EQ(run("trace " + log), 3) << out_;
  EXPECT_NE(out_.find("trace: INVALID"), std::string::npos) << out_;
  EXPECT_EQ(out_.find("trace: OK"), std::string::npos) << out_;
  EXPECT_EQ(run("trace --allow-discarded " + log), 3) << out_;  // still no valid cell

  RunSpec s;
  s.ranks = 1;
  s.dispatches = 3;
  std::string extra = write("extra.log", run_log(s));
  EXPECT_EQ(run("trace " + extra + " --expect-rounds 2"), 3) << out_;
  EXPECT_NE(out_.find("1 dispatch(es) discarded"), std::string::npos) << out_;
  EXPECT_EQ(run("trace " + extra + " --expect-rounds 2 --allow-discarded"), 0) << out_;
}

// The report could not be written (stdout on /dev/full): not exit 0.
TEST_F(TraceCli, UnwritableStdoutFails) {
  RunSpec s;
  s.ranks = 1;
  s.dispatches = 2;
  std::string log = write("run.log", run_log(s));
  ASSERT_EQ(run("trace " + log), 0) << out_;
  for (const char* flags : {"", " --json"}) {
    std::string cmd = std::string(TASKRING_BIN) + " trace " + log + flags + " > /dev/full 2> '" + dir_ + "/err.txt'";
    int st = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(st));
    EXPECT_EQ(WEXITSTATUS(st), 1) << flags;
    EXPECT_NE(slurp(dir_ + "/err.txt").find("could not write the output to stdout"), std::string::npos);
  }
}

// Two runs appending to one log at once: rank 0 is claimed by two pids.
TEST_F(TraceCli, ConcurrentRunsInOneLogAreFlagged) {
  RunSpec a;
  a.ranks = 2;
  a.dispatches = 2;
  a.rank_attr = true;
  RunSpec b = a;
  b.pid_base = 3000;
  std::string log = write("both.log", run_log(a) + run_log(b));
  EXPECT_EQ(run("trace " + log), 0) << out_;
  EXPECT_NE(out_.find("warning: rank 0 is claimed by pids 1000 and 3000 at overlapping times"), std::string::npos)
      << out_;
  EXPECT_EQ(run("trace " + log + " --expect-ranks 2"), 3) << out_;
  EXPECT_NE(out_.find("trace: INVALID"), std::string::npos) << out_;
}

TEST_F(TraceCli, MissingSpanExitsThreeAndNamesTheCell) {
  RunSpec s;
  s.ranks = 2;
  s.dispatches = 3;
  s.drop = [](int r, int d, Part p) { return r == 1 && d == 2 && p == Part::kOrch; };
  std::string log = write("run.log", run_log(s));
  EXPECT_EQ(run("trace " + log + " --expect-ranks 2 --expect-rounds 2 --warmup 1"), 3) << out_;
  EXPECT_NE(out_.find("rank 1 (pid 1001) round 1: missing orch"), std::string::npos) << out_;
  // --require can drop the orch requirement (e.g. for runtimes without device windows).
  EXPECT_EQ(run("trace " + log + " --expect-ranks 2 --expect-rounds 2 --warmup 1 --require root,sched"), 0) << out_;
}

TEST_F(TraceCli, TornRecordExitsThree) {
  RunSpec s;
  s.ranks = 1;
  s.dispatches = 1;
  std::string log = write("run.log", run_log(s) + "[STRACE] v=1 pid=1000 tid=1001 inv=\n");
  EXPECT_EQ(run("trace " + log), 3) << out_;
  EXPECT_NE(out_.find("1 torn"), std::string::npos) << out_;
}

TEST_F(TraceCli, UsageErrorsExitTwo) {
  EXPECT_EQ(run("trace " + dir_ + "/does-not-exist.log"), 2);
  std::string log = write("run.log", "");
  EXPECT_EQ(run("trace " + log + " --expect-rounds 0"), 2);
  EXPECT_EQ(run("trace " + log + " --warmup -1"), 2);
  EXPECT_EQ(run("trace " + log + " --no-such-flag"), 2);
  EXPECT_EQ(run("trace " + log + " --rank-by name"), 2);
  EXPECT_EQ(run("trace " + log + " --require cpu"), 2);
  EXPECT_EQ(run("trace"), 2);
}

// A log without a single record is not a valid measurement (issue 11).
TEST_F(TraceCli, LogWithoutRecordsExitsThree) {
  std::string log = write("empty.log", "hello\n");
  EXPECT_EQ(run("trace " + log), 3);
  EXPECT_NE(out_.find("No [STRACE] markers found."), std::string::npos) << out_;
  EXPECT_NE(out_.find("trace: INVALID \xE2\x80\x94 no timing records found"), std::string::npos) << out_;
  EXPECT_EQ(run("trace " + write("zero.log", "")), 3);
  EXPECT_NE(out_.find("no timing records found"), std::string::npos) << out_;
  EXPECT_EQ(run("trace --json " + log), 3);
  EXPECT_EQ(nlohmann::json::parse(out_)["status"], "invalid");
}

TEST_F(TraceCli, JsonReportAndChromeTrace) {
  RunSpec s;
  s.ranks = 2;
  s.dispatches = 2;
  s.drop = [](int r, int d, Part p) { return r == 0 && d == 1 && p == Part::kSched; };
  std::string log = write("run.log", run_log(s));
  std::string chrome = dir_ + "/trace.json";
  EXPECT_EQ(run("trace " + log + " --json --chrome " + chrome + " --expect-ranks 2 --expect-rounds 2"), 3);
  auto j = nlohmann::json::parse(out_);
  EXPECT_EQ(j["schema"], "taskring.trace/1");
  EXPECT_EQ(j["matrix"]["valid_cells"], 3);
  EXPECT_EQ(j["exit_code"], 3);
  bool found_null = false;
  for (auto& c : j["cells"]) {
    if (c["rank"] == 0 && c["round"] == 1) {
      EXPECT_FALSE(c["valid"].get<bool>());
      found_null = c["effective_us"].is_null();
    }
  }
  EXPECT_TRUE(found_null);
  EXPECT_TRUE(j["stats"]["per_round"]["values"][1].is_null());

  std::ifstream f(chrome);
  auto c = nlohmann::json::parse(f);
  ASSERT_TRUE(c.contains("traceEvents"));
  size_t spans = 0, lanes = 0;
  for (auto& e : c["traceEvents"]) {
    if (e["ph"] == "X") ++spans;
    if (e["ph"] == "M" && e["name"] == "process_name") ++lanes;
  }
  EXPECT_EQ(spans, 2u * 2u * 7u - 1u);
  EXPECT_EQ(lanes, 2u);
  EXPECT_EQ(c["clockAnchors"].size(), 2u);
}

// Device-clock spans whose invocation lost its host spans (runner_run and
// the chip.run root) have no origin to be drawn from: the Chrome trace lists them, with their own
// times, under unalignedDeviceSpans instead of placing them anywhere.
TEST_F(TraceCli, DeviceSpansWithoutTheirHostSpanAreListedNotDrawn) {
  RunSpec s;
  s.ranks = 1;
  s.dispatches = 2;
  s.drop = [](int, int d, Part p) { return d == 0 && (p == Part::kBind || p == Part::kRoot); };
  std::string log = write("run.log", run_log(s));
  std::string chrome = dir_ + "/unaligned.json";
  run("trace " + log + " --chrome " + chrome);
  std::ifstream f(chrome);
  ASSERT_TRUE(f.good()) << out_;
  auto c = nlohmann::json::parse(f);
  ASSERT_TRUE(c.contains("unalignedDeviceSpans")) << c.dump().substr(0, 400);
  const auto& u = c["unalignedDeviceSpans"];
  ASSERT_EQ(u.size(), 3u);  // orch, sched and device_wall of dispatch 0
  for (const auto& e : u) {
    EXPECT_NE(e["name"].get<std::string>().find("device_wall"), std::string::npos) << e.dump();
    EXPECT_TRUE(e.contains("ts_ns") && e.contains("dur_ns") && e.contains("args")) << e.dump();
  }
  size_t device_drawn = 0;
  for (auto& e : c["traceEvents"])
    if (e["ph"] == "X" && e.value("cat", "") == "device") ++device_drawn;
  EXPECT_EQ(device_drawn, 3u);  // dispatch 1's three device spans still are
}

// Bad option values get a sentence naming the option and its range (issue 11:
// `--expect-ranks 0` used to answer with a 300-digit number).
TEST_F(TraceCli, BadOptionValuesAreExplained) {
  std::string log = write("run.log", run_log(RunSpec{}));
  struct Case {
    std::string args, message;
  } cases[] = {
      {"--expect-ranks 0", "--expect-ranks: must be an integer in [1, 65536], got '0'"},
      {"--expect-ranks 99999999999999999999",
       "--expect-ranks: must be an integer in [1, 65536], got '99999999999999999999'"},
      {"--expect-rounds -3", "--expect-rounds: must be an integer in [1, 16777216], got '-3'"},
      {"--warmup x", "--warmup: must be an integer in [0, 16777216], got 'x'"},
      {"--dispatches-per-round 2147483647",
       "--dispatches-per-round: must be an integer in [1, 1048576], got '2147483647'"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(run("trace " + log + " " + c.args), 2) << c.args;
    EXPECT_NE(err_.find(c.message), std::string::npos) << c.args << ": " << err_;
    EXPECT_EQ(err_.find("0000000000"), std::string::npos) << err_;
  }
}

// A NUL or an escape sequence in a span name must not cut or rewrite the
// report: the verdict line is still there, and the bytes are shown escaped.
TEST_F(TraceCli, ControlBytesInNamesDoNotTruncateTheReport) {
  testing::SpanRec r;
  r.name = std::string("chip.run.x\0y\x1bz", 14);
  testing::SpanRec root;
  std::string log = write("nul.log", testing::strace(r) + "\n" + testing::strace(root) + "\n");
  EXPECT_EQ(run("trace " + log + " --require root"), 0) << out_;
  EXPECT_NE(out_.find("chip.run.x\\x00y\\x1bz"), std::string::npos) << out_;
  EXPECT_NE(out_.find("trace: OK"), std::string::npos) << out_;
  EXPECT_EQ(out_.find('\0'), std::string::npos);
}

// Empty, binary and random input is "no timing records found", never OK.
TEST_F(TraceCli, BinaryAndRandomInputExitThree) {
  std::string bin(4096, '\0');
  for (size_t i = 0; i < bin.size(); ++i) bin[i] = static_cast<char>((i * 2654435761u) >> 13);
  for (const std::string& content : {std::string(), bin, std::string("[STRACE]\0\0[CLOCK_ANCHOR]\n", 26)}) {
    std::string log = write("in.bin", content);
    EXPECT_EQ(run("trace " + log), 3) << out_;
    EXPECT_NE(out_.find("no timing records found"), std::string::npos) << out_;
  }
}

// Limits that come from the log, not an option, are an error too (exit 2).
TEST_F(TraceCli, AbsurdMatrixFromOptionsIsAnError) {
  std::string log = write("run.log", run_log(RunSpec{}));
  EXPECT_EQ(run("trace " + log + " --expect-ranks 65536 --expect-rounds 16777216"), 2);
  EXPECT_NE(err_.find("cells, above the limit 1048576"), std::string::npos) << err_;
}

// The per-task device profile: one core_task span per kernel call, written
// after the run, and one Chrome lane per core under the rank; none when off.
TEST_F(TraceCli, DeviceProfileGivesOneLanePerCore) {
  ASSERT_EQ(run("run bgemm --rounds 1 --warmup 0"), 0) << err_;
  EXPECT_EQ(err_.find("core_task"), std::string::npos);
  ASSERT_EQ(run("run bgemm --rounds 1 --warmup 0 --profile"), 0) << err_;
  const std::string log = write("profile.log", err_);
  size_t records = 0;
  for (size_t at = err_.find("name=chip.run.runner_run.core_task"); at != std::string::npos;
       at = err_.find("name=chip.run.runner_run.core_task", at + 1)) {
    ++records;
  }
  EXPECT_EQ(records, 64u);  // bgemm: 64 single-kernel tasks per run
  EXPECT_NE(err_.find("core_type=aic cluster="), std::string::npos);
  std::string chrome = dir_ + "/p.json";
  ASSERT_EQ(run("trace " + log + " --chrome " + chrome), 0) << out_;
  std::ifstream f(chrome);
  auto c = nlohmann::json::parse(f);
  size_t core_lanes = 0, core_events = 0;
  for (auto& e : c["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"].get<std::string>().rfind("core ", 0) == 0) {
      ++core_lanes;
    }
    if (e["ph"] == "X" && e.value("cat", "") == "core") ++core_events;
  }
  EXPECT_GE(core_lanes, 1u);
  EXPECT_EQ(core_events, 64u);
}

}  // namespace
}  // namespace taskring::trace
