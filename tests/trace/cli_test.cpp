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
    std::ifstream f(out);
    std::stringstream ss;
    ss << f.rdbuf();
    out_ = ss.str();
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }

  std::string dir_;
  std::string out_;
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

TEST_F(TraceCli, EmptyLogWithoutExpectationsExitsZero) {
  std::string log = write("empty.log", "hello\n");
  EXPECT_EQ(run("trace " + log), 0);
  EXPECT_NE(out_.find("No [STRACE] markers found."), std::string::npos) << out_;
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

}  // namespace
}  // namespace taskring::trace
