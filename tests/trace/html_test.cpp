// `taskring trace --html`: the page is self-contained and, opened in headless
// Chromium (Debian `chromium`, installed by scripts/bootstrap), its script
// draws one heat-map cell per (rank, round), marks and names the invalid
// ones, and draws the swimlane. Skips only where chromium is absent.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "run_log.hpp"

namespace taskring::trace {
namespace {

using testing::Part;
using testing::RunSpec;

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

int shell(const std::string& cmd) {
  int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

class TraceHtml : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/taskring-trace-html-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

  // The DOM of `page` after its scripts ran, from headless Chromium.
  std::string render(const std::string& page) {
    std::string dom = dir_ + "/dom.html";
    // --no-sandbox: CI runs as root; a private profile keeps runs independent.
    int rc = shell("timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir='" + dir_ +
                   "/profile' --dump-dom 'file://" + page + "' > '" + dom + "' 2> '" + dir_ + "/chromium.err'");
    EXPECT_EQ(rc, 0) << slurp(dir_ + "/chromium.err");
    return slurp(dom);
  }

  std::string dir_;
};

TEST_F(TraceHtml, HeatMapSwimlaneAndInvalidCellsRenderInChromium) {
  if (shell("command -v chromium > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "chromium is not installed (scripts/bootstrap installs it)";
  }
  RunSpec s;
  s.ranks = 3;
  s.dispatches = 5;  // 1 warmup + 4 measured rounds
  s.drop = [](int r, int d, Part p) { return r == 2 && d == 3 && p == Part::kSched; };
  std::string log = dir_ + "/run.log";
  std::ofstream(log, std::ios::binary) << run_log(s);
  std::string page = dir_ + "/report.html";
  ASSERT_EQ(shell(std::string(TASKRING_BIN) + " trace '" + log + "' --expect-ranks 3 --expect-rounds 4 --warmup 1" +
                  " --html '" + page + "' > '" + dir_ + "/out.txt'"),
            3)
      << slurp(dir_ + "/out.txt");

  // Self-contained: no external script, style, image or link.
  std::string html = slurp(page);
  ASSERT_FALSE(html.empty());
  EXPECT_FALSE(std::regex_search(html, std::regex(R"((src|href)\s*=)"))) << "the page loads something";
  EXPECT_EQ(html.find("<link"), std::string::npos);

  std::string dom = render(page);
  ASSERT_NE(dom.find("data-cells=\"12\""), std::string::npos) << dom.substr(0, 2000);
  EXPECT_NE(dom.find("data-invalid=\"1\""), std::string::npos);
  EXPECT_EQ(count(dom, "class=\"cell valid\""), 11u);
  EXPECT_EQ(count(dom, "class=\"cell invalid\""), 1u);
  // The invalid cell is marked and named, in its tooltip and in the list.
  EXPECT_NE(dom.find("title=\"rank 2 (pid 1002) round 2: missing sched [inv 4]\""), std::string::npos)
      << dom.substr(0, 4000);
  EXPECT_NE(dom.find("invalid: rank 2 (pid 1002) round 2: missing sched [inv 4]"), std::string::npos);
  EXPECT_NE(dom.find("trace: INVALID"), std::string::npos);
  // The swimlane of round 0 (all valid): per rank host lanes, orchestrator,
  // scheduler and device.
  EXPECT_NE(dom.find("Swimlane of round 0"), std::string::npos);
  EXPECT_GE(count(dom, "class=\"span\""), 3u * 7u);
  for (const char* lane : {"rank 0 host", "rank 1 orchestrator", "rank 2 scheduler", "rank 2 device"}) {
    EXPECT_NE(dom.find(lane), std::string::npos) << lane;
  }
}

// A name from the log is data, never markup, even one that closes a script.
TEST_F(TraceHtml, NamesFromTheLogCannotInjectMarkup) {
  testing::SpanRec r;
  r.name = "chip.run.</script><script>document.title='pwned'</script>";
  testing::SpanRec root;
  std::string log = dir_ + "/run.log";
  std::ofstream(log, std::ios::binary) << testing::strace(r) << "\n" << testing::strace(root) << "\n";
  std::string page = dir_ + "/report.html";
  ASSERT_EQ(shell(std::string(TASKRING_BIN) + " trace '" + log + "' --require root --html '" + page + "' > /dev/null"),
            0);
  std::string html = slurp(page);
  EXPECT_EQ(count(html, "</script>"), 2u) << "only the page's own two scripts close";
  if (shell("command -v chromium > /dev/null 2>&1") != 0) GTEST_SKIP() << "chromium is not installed";
  std::string dom = render(page);
  EXPECT_NE(dom.find("data-cells=\"1\""), std::string::npos);
  EXPECT_EQ(dom.find("<title>pwned"), std::string::npos);
}

// With the device profile on, the swimlane has one lane per core.
TEST_F(TraceHtml, ProfiledRunShowsCoreLanes) {
  if (shell("command -v chromium > /dev/null 2>&1") != 0) GTEST_SKIP() << "chromium is not installed";
  std::string log = dir_ + "/run.log";
  ASSERT_EQ(
      shell(std::string(TASKRING_BIN) + " run bgemm --rounds 1 --warmup 0 --profile > /dev/null 2> '" + log + "'"), 0);
  std::string page = dir_ + "/report.html";
  ASSERT_EQ(shell(std::string(TASKRING_BIN) + " trace '" + log + "' --html '" + page + "' > /dev/null"), 0);
  std::string dom = render(page);
  EXPECT_NE(dom.find("data-cells=\"1\""), std::string::npos);
  // Which cores the scheduler gave bgemm's tasks varies from run to run
  // (core 0 had none in about one run of six): any core's lane will do.
  EXPECT_TRUE(std::regex_search(dom, std::regex("rank 0 core [0-9]+"))) << dom.substr(0, 3000);
  EXPECT_NE(dom.find("chip.run.runner_run.core_task"), std::string::npos);  // span tooltips
}

}  // namespace
}  // namespace taskring::trace
