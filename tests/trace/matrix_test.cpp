#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>
#include <string>

#include "run_log.hpp"
#include "taskring/trace/matrix.hpp"
#include "taskring/trace/parser.hpp"
#include "taskring/trace/report.hpp"
#include "taskring/trace/stats.hpp"

namespace taskring::trace {
namespace {

using testing::Part;
using testing::RunSpec;

struct Analysed {
  Trace trace;
  std::vector<Invocation> invs;
  Matrix m;
};

Analysed analyse(const std::string& log, MatrixOptions o) {
  Analysed a;
  a.trace = parse_trace(log);
  StageNames names;
  a.invs = group_invocations(a.trace, names);
  auto m = build_matrix(a.trace, a.invs, names, o);
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  if (m.ok()) a.m = std::move(*m);
  return a;
}

MatrixOptions expect(int ranks, int rounds, int warmup) {
  MatrixOptions o;
  o.ranks = ranks;
  o.rounds = rounds;
  o.warmup = warmup;
  return o;
}

TEST(TraceMatrix, AllCellsValid) {
  RunSpec s;
  s.ranks = 8;
  s.dispatches = 10;
  Analysed a = analyse(run_log(s), expect(8, 8, 2));
  EXPECT_EQ(a.m.ranks, 8);
  EXPECT_EQ(a.m.rounds, 8);
  EXPECT_EQ(a.m.valid_cells, 64u);
  EXPECT_TRUE(a.m.problems.empty());
  EXPECT_EQ(verdict_exit_code(a.trace, a.m), 0);
  // rank 3, round 0 is dispatch 2 (after two warmup rounds): 410 + 30 + 2 µs.
  EXPECT_DOUBLE_EQ(a.m.cell(3, 0).effective_us, 442.0);
  EXPECT_DOUBLE_EQ(a.m.cell(3, 0).host_us, 1010.0);
  ASSERT_TRUE(a.m.cell(3, 0).device_us.has_value());
  EXPECT_DOUBLE_EQ(*a.m.cell(3, 0).device_us, 900.0);
  // Per round: max across ranks = rank 7.
  ASSERT_TRUE(a.m.round_values[0].has_value());
  EXPECT_DOUBLE_EQ(*a.m.round_values[0], 410 + 70 + 2);
  EXPECT_EQ(a.m.cell_stats.n, 64u);
  EXPECT_EQ(a.m.rank_source, "pid");
  // The union of chip.run windows of 8 ranks started 1 µs apart.
  ASSERT_TRUE(a.m.host_union[0].has_value());
  EXPECT_DOUBLE_EQ(*a.m.host_union[0], 1010.0 + 7.0);
}

// The host-speed control of a bench (set_host_speed): shown in the table and
// the JSON; a move beyond kSteadyHostChange is a warning naming each CPU's
// timings, never an invalid matrix.
TEST(TraceMatrix, HostSpeedIsReportedAndAMoveIsAWarningOnly) {
  RunSpec s;
  s.ranks = 2;
  s.dispatches = 4;
  Analysed steady = analyse(run_log(s), expect(2, 2, 2));
  set_host_speed(steady.m, {{0, 10.0}, {1, 10.0}}, {{0, 10.5}, {1, 9.2}});
  ASSERT_TRUE(steady.m.host_speed.has_value());
  EXPECT_TRUE(steady.m.host_speed->steady());
  EXPECT_NEAR(steady.m.host_speed->largest_change, 0.08, 1e-12);
  EXPECT_TRUE(steady.m.warnings.empty());
  EXPECT_NE(
      render_matrix(steady.trace, steady.m).find("cpu0 10.0 -> 10.5, cpu1 10.0 -> 9.2; largest change 8 % (steady)"),
      std::string::npos)
      << render_matrix(steady.trace, steady.m);

  Analysed moved = analyse(run_log(s), expect(2, 2, 2));
  set_host_speed(moved.m, {{0, 6.4}, {1, 6.4}}, {{0, 6.5}, {1, 12.8}});
  ASSERT_TRUE(moved.m.host_speed.has_value());
  EXPECT_FALSE(moved.m.host_speed->steady());
  ASSERT_EQ(moved.m.warnings.size(), 1u);
  EXPECT_NE(moved.m.warnings[0].find("moved by 100 %"), std::string::npos) << moved.m.warnings[0];
  EXPECT_NE(moved.m.warnings[0].find("cpu1 6.4 -> 12.8 us"), std::string::npos) << moved.m.warnings[0];
  EXPECT_EQ(verdict_exit_code(moved.trace, moved.m), 0);
  const auto j = nlohmann::json::parse(render_json(moved.trace, moved.m));
  EXPECT_EQ(j["host_speed"]["cpus"], nlohmann::json::array({0, 1}));
  EXPECT_DOUBLE_EQ(j["host_speed"]["after_us"][1].get<double>(), 12.8);
  EXPECT_FALSE(j["host_speed"]["steady"].get<bool>());
  EXPECT_EQ(j["warnings"].size(), 1u);
  EXPECT_EQ(j["status"], "ok");

  EXPECT_FALSE(j["host_speed"].contains("nodes"));  // one host: CPUs need no node

  // L4: every node probes its own CPUs; the report names each by node.
  Analysed l4 = analyse(run_log(s), expect(2, 2, 2));
  set_host_speed(l4.m, {{0, 5.0, 0}, {0, 5.0, 1}}, {{0, 5.1, 0}, {0, 7.5, 1}});
  ASSERT_EQ(l4.m.warnings.size(), 1u);
  EXPECT_NE(l4.m.warnings[0].find("moved by 50 %"), std::string::npos) << l4.m.warnings[0];
  EXPECT_NE(l4.m.warnings[0].find("node0 cpu0 5.0 -> 5.1, node1 cpu0 5.0 -> 7.5 us"), std::string::npos)
      << l4.m.warnings[0];
  const auto jl4 = nlohmann::json::parse(render_json(l4.trace, l4.m));
  EXPECT_EQ(jl4["host_speed"]["nodes"], nlohmann::json::array({0, 1}));
  EXPECT_EQ(jl4["host_speed"]["cpus"], nlohmann::json::array({0, 0}));

  Analysed none = analyse(run_log(s), expect(2, 2, 2));
  set_host_speed(none.m, {}, {{0, 1.0}});  // a probe that failed: nothing reported
  EXPECT_FALSE(none.m.host_speed.has_value());
  EXPECT_FALSE(nlohmann::json::parse(render_json(none.trace, none.m)).contains("host_speed"));
}

TEST(TraceMatrix, EveryMissingSpanCombinationInvalidatesTheCell) {
  const Part parts[3] = {Part::kOrch, Part::kSched, Part::kRoot};
  for (int mask = 1; mask < 8; ++mask) {
    RunSpec s;
    s.ranks = 2;
    s.dispatches = 5;
    s.drop = [mask, &parts](int r, int d, Part p) {
      if (r != 1 || d != 3) return false;
      for (int i = 0; i < 3; ++i)
        if ((mask >> i & 1) && p == parts[i]) return true;
      return false;
    };
    Analysed a = analyse(run_log(s), expect(2, 4, 1));
    SCOPED_TRACE("mask " + std::to_string(mask));
    const Cell& c = a.m.cell(1, 2);
    EXPECT_FALSE(c.valid);
    EXPECT_EQ(c.missing.size(), static_cast<size_t>(__builtin_popcount(mask)));
    EXPECT_EQ(a.m.valid_cells, 7u);
    EXPECT_EQ(a.m.cell_stats.n, 7u);  // excluded, not averaged in as 0
    EXPECT_GT(a.m.cell_stats.min, 400.0);
    EXPECT_FALSE(a.m.round_values[2].has_value());
    EXPECT_EQ(a.m.rank_stats[1].n, 3u);
    ASSERT_EQ(a.m.problems.size(), 1u);
    EXPECT_NE(a.m.problems[0].find("rank 1 (pid 1001) round 2"), std::string::npos) << a.m.problems[0];
    EXPECT_EQ(verdict_exit_code(a.trace, a.m), 3);
    std::string text = render_matrix(a.trace, a.m);
    EXPECT_NE(text.find("trace: INVALID"), std::string::npos);
    EXPECT_NE(text.find("\xE2\x80\x94"), std::string::npos);
    EXPECT_EQ(text.find(" 0.0 "), std::string::npos);
  }
}

TEST(TraceMatrix, MissingDeviceWallAloneStaysValid) {
  RunSpec s;
  s.ranks = 1;
  s.dispatches = 2;
  s.drop = [](int, int d, Part p) { return d == 1 && p == Part::kDeviceWall; };
  Analysed a = analyse(run_log(s), expect(1, 2, 0));
  EXPECT_TRUE(a.m.cell(0, 1).valid);
  EXPECT_FALSE(a.m.cell(0, 1).device_us.has_value());
}

TEST(TraceMatrix, WarmupRoundsAreNotValidated) {
  RunSpec s;
  s.ranks = 2;
  s.dispatches = 4;
  s.drop = [](int, int d, Part p) { return d < 2 && p == Part::kSched; };
  Analysed a = analyse(run_log(s), expect(2, 2, 2));
  EXPECT_EQ(a.m.valid_cells, 4u);
  EXPECT_EQ(verdict_exit_code(a.trace, a.m), 0);
}

TEST(TraceMatrix, MissingRanksAreNamed) {
  RunSpec s;
  s.ranks = 6;  // 8 expected
  s.dispatches = 3;
  Analysed a = analyse(run_log(s), expect(8, 3, 0));
  EXPECT_EQ(a.m.valid_cells, 18u);
  EXPECT_EQ(a.m.invalid_cells(), 6u);
  ASSERT_EQ(a.m.problems.size(), 2u);
  EXPECT_NE(a.m.problems[0].find("rank 6: no dispatch seen"), std::string::npos);
  EXPECT_NE(a.m.problems[1].find("rank 7"), std::string::npos);
  EXPECT_EQ(verdict_exit_code(a.trace, a.m), 3);
}

TEST(TraceMatrix, RankLostEntirely) {
  RunSpec s;
  s.ranks = 3;
  s.dispatches = 2;
  s.drop = [](int r, int, Part) { return r == 1; };
  Analysed a = analyse(run_log(s), expect(3, 2, 0));
  // pid-ordered ranks: the survivors become ranks 0 and 1; rank 2 has nothing.
  EXPECT_EQ(a.m.rank_info[2].dispatches, 0u);
  EXPECT_EQ(a.m.invalid_cells(), 2u);
  EXPECT_EQ(verdict_exit_code(a.trace, a.m), 3);
}

TEST(TraceMatrix, RanksFromRankAttr) {
  RunSpec s;
  s.ranks = 3;
  s.dispatches = 2;
  s.rank_attr = true;
  s.reverse_emit = true;  // pid appearance order disagrees with the rank attr
  Analysed a = analyse(run_log(s), expect(3, 2, 0));
  EXPECT_EQ(a.m.rank_source, "attr");
  ASSERT_EQ(a.m.rank_info[2].pids.size(), 1u);
  EXPECT_EQ(a.m.rank_info[2].pids[0], testing::pid_of(s, 2));
  EXPECT_DOUBLE_EQ(a.m.cell(2, 1).effective_us, 410 + 20 + 1);

  MatrixOptions by_pid = expect(3, 2, 0);
  by_pid.rank_by = RankBy::kPid;
  Analysed b = analyse(run_log(s), by_pid);
  EXPECT_EQ(b.m.rank_source, "pid");
  EXPECT_EQ(b.m.rank_info[0].pids[0], testing::pid_of(s, 2));  // first appearance
}

TEST(TraceMatrix, RoundsNotDivisible) {
  RunSpec s;
  s.ranks = 2;
  s.dispatches = 7;  // 2 per round expected over 1 + 3 rounds = 8
  s.drop = [](int r, int d, Part) { return r == 1 && d == 6; };
  MatrixOptions o = expect(2, 3, 1);
  o.dispatches_per_round = 2;
  Analysed a = analyse(run_log(s), o);
  EXPECT_EQ(a.m.dispatches_per_round, 2);
  EXPECT_EQ(a.m.rank_info[0].dispatches, 7u);
  EXPECT_EQ(a.m.rank_info[1].dispatches, 6u);
  EXPECT_FALSE(a.m.cell(0, 2).valid);  // second dispatch of the last round never came
  EXPECT_FALSE(a.m.cell(1, 2).valid);
  EXPECT_TRUE(a.m.cell(0, 1).valid);
  // A round's value sums the rank's dispatches: rank 0, round 0 = dispatches 2 and 3.
  EXPECT_DOUBLE_EQ(a.m.cell(0, 0).effective_us, (410 + 2) + (410 + 3));
  bool warned = false;
  for (auto& w : a.m.warnings) warned |= w.find("not a multiple") != std::string::npos;
  EXPECT_TRUE(warned);
  EXPECT_EQ(verdict_exit_code(a.trace, a.m), 3);
}

TEST(TraceMatrix, ExtraDispatchesAreWarnedAndIgnored) {
  RunSpec s;
  s.ranks = 1;
  s.dispatches = 5;
  Analysed a = analyse(run_log(s), expect(1, 3, 1));
  EXPECT_EQ(a.m.valid_cells, 3u);
  ASSERT_EQ(a.m.warnings.size(), 1u);
  EXPECT_NE(a.m.warnings[0].find("the last 1 are ignored"), std::string::npos);
}

TEST(TraceMatrix, ExtraDispatchesFailTheVerdictUnlessAllowed) {
  RunSpec s;
  s.ranks = 1;
  s.dispatches = 5;
  Analysed a = analyse(run_log(s), expect(1, 3, 1));
  EXPECT_EQ(a.m.discarded_dispatches, 1u);
  EXPECT_EQ(verdict_exit_code(a.trace, a.m), 3);
  EXPECT_NE(render_matrix(a.trace, a.m).find("1 dispatch(es) discarded"), std::string::npos);
  MatrixOptions o = expect(1, 3, 1);
  o.allow_discarded = true;
  Analysed b = analyse(run_log(s), o);
  EXPECT_EQ(verdict_exit_code(b.trace, b.m), 0);
}

// The only record names a rank above the limit: it is discarded, no cell is
// left, and that is never OK (it was `trace: OK — 0/0 cells valid`).
TEST(TraceMatrix, ZeroValidCellsIsNeverOk) {
  testing::SpanRec root;
  root.pid = 1000;
  root.tid = 1001;
  root.inv = 1;
  root.name = "chip.run";
  root.ts = 1'000'000'000;
  root.dur = 1000;
  root.attrs = "rank=2147483647";
  const std::string log = testing::strace(root) + "\n";
  MatrixOptions o;
  o.require_orch = o.require_sched = false;
  Analysed a = analyse(log, o);
  EXPECT_EQ(a.m.valid_cells, 0u);
  EXPECT_EQ(a.m.discarded_dispatches, 1u);
  EXPECT_EQ(verdict_exit_code(a.trace, a.m), 3);
  EXPECT_NE(render_matrix(a.trace, a.m).find("trace: INVALID"), std::string::npos);
  // Allowing the discard does not make an empty matrix OK.
  o.allow_discarded = true;
  Analysed b = analyse(log, o);
  EXPECT_EQ(verdict_exit_code(b.trace, b.m), 3);
}

TEST(TraceMatrix, DiscardedRankFailsAnOtherwiseValidRun) {
  RunSpec s;
  s.ranks = 2;
  s.dispatches = 2;
  s.rank_attr = true;
  std::string log = run_log(s);
  // Rank 1 becomes rank 70000, above the limit: its dispatches are discarded.
  for (size_t at = log.find("rank=1"); at != std::string::npos; at = log.find("rank=1", at)) {
    log.replace(at, 6, "rank=70000");
  }
  Analysed a = analyse(log, MatrixOptions{});
  EXPECT_EQ(a.m.ranks, 1);
  EXPECT_EQ(a.m.valid_cells, 2u);
  EXPECT_EQ(a.m.discarded_dispatches, 2u);
  EXPECT_EQ(verdict_exit_code(a.trace, a.m), 3);
  MatrixOptions allow;
  allow.allow_discarded = true;
  Analysed b = analyse(log, allow);
  EXPECT_EQ(verdict_exit_code(b.trace, b.m), 0);
  // A rank beyond the expected ranks is discarded too.
  s.rank_attr = true;
  Analysed c = analyse(run_log(s), expect(1, 2, 0));
  EXPECT_EQ(c.m.discarded_dispatches, 2u);
  EXPECT_EQ(verdict_exit_code(c.trace, c.m), 3);
}

// Two one-rank runs appending to one log at the same time: both pids claim
// rank 0. Sequential runs (one pid after the other) are not flagged.
TEST(TraceMatrix, TwoPidsClaimingOneRankAtOnceAreFlagged) {
  RunSpec first;
  first.ranks = 1;
  first.dispatches = 3;
  first.rank_attr = true;
  RunSpec second = first;
  second.pid_base = 2000;
  second.t_base = first.t_base + 5'000'000;  // starts while the first still runs
  const std::string log = run_log(first) + run_log(second);
  Analysed a = analyse(log, MatrixOptions{});
  ASSERT_EQ(a.m.ranks, 1);
  EXPECT_EQ(a.m.rank_info[0].pids.size(), 2u);
  bool warned = false;
  for (auto& w : a.m.warnings) {
    warned |= w.find("claimed by pids 1000 and 2000 at overlapping times") != std::string::npos;
  }
  EXPECT_TRUE(warned);
  MatrixOptions ranks_expected;
  ranks_expected.ranks = 1;
  Analysed b = analyse(log, ranks_expected);
  EXPECT_EQ(b.m.valid_cells, 6u);
  EXPECT_EQ(verdict_exit_code(b.trace, b.m), 3);
  EXPECT_NE(render_matrix(b.trace, b.m).find("invalid: rank 0 is claimed by pids"), std::string::npos);

  second.t_base = first.t_base + 1'000'000'000;  // after the first ended
  Analysed c = analyse(run_log(first) + run_log(second), ranks_expected);
  for (auto& w : c.m.warnings) EXPECT_EQ(w.find("overlapping"), std::string::npos) << w;
  EXPECT_EQ(verdict_exit_code(c.trace, c.m), 0);
}

TEST(TraceMatrix, InfersDispatchesPerRound) {
  RunSpec s;
  s.ranks = 1;
  s.dispatches = 6;
  Analysed a = analyse(run_log(s), expect(1, 2, 1));
  EXPECT_EQ(a.m.dispatches_per_round, 2);
  EXPECT_EQ(a.m.valid_cells, 2u);
}

TEST(TraceMatrix, DuplicateNamesUseTheEarliest) {
  RunSpec s;
  s.ranks = 1;
  s.dispatches = 1;
  std::string log = run_log(s);
  testing::SpanRec late;
  late.pid = 1000;
  late.tid = 1001;
  late.inv = 1;
  late.depth = 3;
  late.name = "chip.run.runner_run.device_wall.orch";
  late.ts = 50'000;
  late.dur = 5'000'000;
  late.attrs = "clk=dev";
  Analysed a = analyse(log + testing::strace(late) + "\n", expect(1, 1, 0));
  EXPECT_DOUBLE_EQ(a.m.cell(0, 0).effective_us, 410.0);
  ASSERT_EQ(a.invs.size(), 1u);
  EXPECT_EQ(a.invs[0].duplicate_names, 1u);
}

TEST(TraceMatrix, NoDataWithExpectationsIsInvalid) {
  Analysed a = analyse("no records here\n", expect(2, 2, 0));
  EXPECT_EQ(verdict_exit_code(a.trace, a.m), 3);
  MatrixOptions rounds_only;
  rounds_only.rounds = 2;
  Analysed b = analyse("", rounds_only);
  EXPECT_EQ(verdict_exit_code(b.trace, b.m), 3);
}

TEST(TraceMatrix, TornRecordFailsAnOtherwiseValidRun) {
  RunSpec s;
  s.ranks = 1;
  s.dispatches = 1;
  Analysed a = analyse(run_log(s) + "[STRACE] v=1 pid=1000 tid=\n", expect(1, 1, 0));
  EXPECT_EQ(a.m.valid_cells, 1u);
  EXPECT_EQ(verdict_exit_code(a.trace, a.m), 3);
}

TEST(TraceMatrix, RejectsImpossibleOptions) {
  Trace t;
  StageNames n;
  MatrixOptions o;
  o.rounds = 0;
  EXPECT_FALSE(build_matrix(t, {}, n, o).ok());
  o = {};
  o.warmup = -1;
  EXPECT_FALSE(build_matrix(t, {}, n, o).ok());
}

// The library names MatrixOptions' fields, never a front end's flags; a front
// end that passes its own names gets them in the message.
TEST(TraceMatrix, OptionErrorsNameTheFieldOrTheCallersName) {
  Trace t;
  StageNames n;
  MatrixOptions o;
  o.dispatches_per_round = 0;
  auto m = build_matrix(t, {}, n, o);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "dispatches_per_round must be >= 1, got 0");
  o = {};
  o.ranks = kMaxRanks + 1;
  Status s = check_matrix_options(o, [](MatrixField f) { return "<" + std::string(matrix_field_name(f)) + ">"; });
  EXPECT_EQ(s.message(), "<ranks> 65537 is above the limit 65536");
  o = {};
  o.warmup = 3;
  EXPECT_TRUE(check_matrix_options(o).ok());
}

TEST(TraceStats, UnionIsNotTheSum) {
  EXPECT_EQ(union_length({{0, 100}, {50, 200}}), 200);   // overlapping: not 250
  EXPECT_EQ(union_length({{0, 100}, {150, 200}}), 150);  // disjoint: the gap does not count
  EXPECT_EQ(union_length({{10, 20}, {0, 100}}), 100);    // nested
  EXPECT_EQ(union_length({{5, 5}}), 0);
  EXPECT_EQ(union_length({}), 0);
}

TEST(TraceStats, OverlappingOrchSchedCountOnce) {
  RunSpec s;
  s.ranks = 1;
  s.dispatches = 1;
  s.extra = [](int, int) { return 0; };
  Analysed a = analyse(run_log(s), expect(1, 1, 0));
  // orch [10, 310) µs, sched [20, 420) µs: union 410, sum would be 700.
  EXPECT_DOUBLE_EQ(a.m.cell(0, 0).effective_us, 410.0);
  EXPECT_DOUBLE_EQ(a.m.cell(0, 0).orch_us + a.m.cell(0, 0).sched_us, 700.0);
}

TEST(TraceStats, SummaryAndTrimmedMean) {
  Summary small = summarize({1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(small.median, 2.5);
  EXPECT_DOUBLE_EQ(small.mean, 2.5);
  EXPECT_NEAR(small.stdev, std::sqrt(5.0 / 3.0), 1e-12);
  EXPECT_FALSE(small.has_trimmed);

  std::vector<double> v(20, 10.0);
  EXPECT_FALSE(summarize(v).has_trimmed);  // n == 20: no trimming
  v = std::vector<double>(23, 10.0);
  v[0] = 1000;  // outliers on both ends
  v[1] = -1000;
  v[2] = 500;
  Summary big = summarize(v);
  ASSERT_TRUE(big.has_trimmed);
  EXPECT_EQ(big.trimmed_each_side, 2u);
  // Drops -1000, 10 (low) and 1000, 500 (high): 19 tens remain.
  EXPECT_DOUBLE_EQ(big.trimmed_mean, 10.0);
  EXPECT_NE(big.mean, 10.0);
  EXPECT_EQ(summarize({}).n, 0u);
  EXPECT_EQ(summarize({7}).stdev, 0.0);
}

TEST(TraceViews, RoundsTableMarksMissingSpans) {
  RunSpec s;
  s.ranks = 1;
  s.dispatches = 3;
  s.drop = [](int, int d, Part p) { return d == 1 && p == Part::kSched; };
  Trace t = parse_trace(run_log(s));
  StageNames n;
  auto invs = group_invocations(t, n);
  std::string table = render_rounds_table(t, invs, n);
  EXPECT_NE(table.find("Effective (us)"), std::string::npos);
  EXPECT_NE(table.find("Avg Effective: 411.0 us [2/3]"), std::string::npos) << table;
  EXPECT_NE(table.find("Avg Sched"), std::string::npos);
  std::string tree = render_tree(t, invs, n);
  EXPECT_NE(tree.find("Effective [dev]"), std::string::npos) << tree;
  std::string summary = render_callable_summary(t, invs, n);
  EXPECT_NE(summary.find("3 invocation(s)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("chip.run: mean 1010.0 us"), std::string::npos) << summary;
}

TEST(TraceViews, StageNamesMatchBySuffix) {
  StageNames n;
  EXPECT_EQ(classify("chip.run", n), Stage::kRoot);
  EXPECT_EQ(classify("chip.run.runner_run.device_wall.orch", n), Stage::kOrch);
  EXPECT_EQ(classify("chip.run.device_wall.sched", n), Stage::kSched);
  EXPECT_EQ(classify("chip.run.runner_run.device_wall", n), Stage::kDeviceWall);
  EXPECT_EQ(classify("chip.run.bind.orch", n), Stage::kOther);
  EXPECT_EQ(classify("chip.run.runner_run.xdevice_wall.orch", n), Stage::kOther);
}

TEST(TraceViews, HostSchedulerFamiliesAreNotInvocations) {
  std::string log = testing::strace({.pid = 1,
                                     .tid = 1,
                                     .inv = 9,
                                     .hid = 1,
                                     .depth = 0,
                                     .name = "node.dispatch",
                                     .ts = 1,
                                     .dur = 1,
                                     .attrs = ""}) +
                    "\n" +
                    testing::strace({.pid = 1,
                                     .tid = 1,
                                     .inv = 9,
                                     .hid = 1,
                                     .depth = 0,
                                     .name = "ext.prof.span",
                                     .ts = 1,
                                     .dur = 1,
                                     .attrs = ""}) +
                    "\n";
  Trace t = parse_trace(log);
  EXPECT_TRUE(group_invocations(t, StageNames{}).empty());
}

}  // namespace
}  // namespace taskring::trace
