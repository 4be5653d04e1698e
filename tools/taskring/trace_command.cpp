// `taskring trace <log>...`: parse captured [STRACE] logs, show timing views
// (text, --json, --chrome, --html) and validate the (rank, round) matrix. Exit status: 0 all expected cells
// valid and nothing torn, 3 missing or torn data, 2 usage errors.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "taskring/trace/invocations.hpp"
#include "taskring/trace/matrix.hpp"
#include "taskring/trace/parser.hpp"
#include "taskring/trace/report.hpp"

namespace taskring::cli {
namespace {

struct TraceFlags {
  std::vector<std::string> logs;
  bool rounds_table = false;
  bool tree = false;
  bool json = false;
  bool allow_discarded = false;
  std::string chrome;
  std::string html;
  int ranks = 0, rounds = 0, warmup = 0, dispatches = 0;
  std::string rank_by = "auto";
  std::string require = "root,orch,sched";
  trace::StageNames names;
};

// An integer option in [lo, hi], with a message that says so in words.
// CLI11 prefixes the message with the option's name.
CLI::Validator int_in(long long lo, long long hi) {
  std::string range = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](std::string& v) -> std::string {
        long long x = 0;
        size_t used = 0;
        try {
          x = std::stoll(v, &used);
        } catch (...) {
          used = 0;
        }
        if (used == 0 || used != v.size() || x < lo || x > hi) {
          return "must be " + range + ", got '" + v + "'";
        }
        return {};
      },
      range);
}

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "taskring trace: %s\n", msg.c_str());
  return 2;
}

int run_trace(const TraceFlags& f) {
  trace::MatrixOptions o;
  if (f.ranks) o.ranks = f.ranks;
  if (f.rounds) o.rounds = f.rounds;
  if (f.dispatches) o.dispatches_per_round = f.dispatches;
  o.warmup = f.warmup;
  o.allow_discarded = f.allow_discarded;
  o.rank_by = f.rank_by == "pid"    ? trace::RankBy::kPid
              : f.rank_by == "attr" ? trace::RankBy::kAttr
                                    : trace::RankBy::kAuto;
  o.require_root = o.require_orch = o.require_sched = false;
  size_t start = 0;
  while (start <= f.require.size()) {
    size_t end = f.require.find(',', start);
    if (end == std::string::npos) end = f.require.size();
    std::string item = f.require.substr(start, end - start);
    if (item == "root")
      o.require_root = true;
    else if (item == "orch")
      o.require_orch = true;
    else if (item == "sched")
      o.require_sched = true;
    else if (!item.empty() && item != "none") {
      return usage_error("--require: unknown span '" + item + "' (accepted: root, orch, sched, none)");
    }
    start = end + 1;
  }

  // The library names MatrixOptions' fields; the user typed these flags.
  auto flag_of = [](trace::MatrixField field) -> std::string {
    switch (field) {
      case trace::MatrixField::kRanks: return "--expect-ranks";
      case trace::MatrixField::kRounds: return "--expect-rounds";
      case trace::MatrixField::kWarmup: return "--warmup";
      case trace::MatrixField::kDispatchesPerRound: return "--dispatches-per-round";
    }
    return std::string(trace::matrix_field_name(field));
  };
  if (Status s = trace::check_matrix_options(o, flag_of); !s.ok()) return usage_error(s.message());
  auto parsed = trace::parse_files(f.logs);
  if (!parsed.ok()) return usage_error(parsed.status().message());
  const trace::Trace& t = *parsed;
  auto invs = trace::group_invocations(t, f.names);
  auto matrix = trace::build_matrix(t, invs, f.names, o);
  if (!matrix.ok()) return usage_error(matrix.status().message());

  if (!f.chrome.empty()) {
    Status s = trace::write_chrome_trace(t, invs, *matrix, f.names, f.chrome);
    if (!s.ok()) return usage_error(s.message());
  }
  if (!f.html.empty()) {
    Status s = trace::write_html_report(t, invs, *matrix, f.names, f.html);
    if (!s.ok()) return usage_error(s.message());
  }
  if (f.json) {
    std::string j = trace::render_json(t, *matrix);
    std::fwrite(j.data(), 1, j.size(), stdout);
    return trace::verdict_exit_code(t, *matrix);
  }
  std::string out;
  if (f.rounds_table) out += trace::render_rounds_table(t, invs, f.names);
  if (f.tree) out += trace::render_tree(t, invs, f.names);
  if (!f.rounds_table && !f.tree) out += trace::render_callable_summary(t, invs, f.names);
  out += "\n" + trace::render_matrix(t, *matrix);
  if (!f.chrome.empty()) out += "chrome trace written to " + f.chrome + "\n";
  if (!f.html.empty()) out += "html report written to " + f.html + " (self-contained; open it in a browser)\n";
  std::fwrite(out.data(), 1, out.size(), stdout);  // not fputs: the report is not a C string
  return trace::verdict_exit_code(t, *matrix);
}

}  // namespace

Command add_trace_command(CLI::App& app) {
  auto flags = std::make_shared<TraceFlags>();
  auto* cmd = app.add_subcommand("trace",
                                 "analyse [STRACE] timing logs; validate ranks x rounds (exit 3 on missing/torn data)");
  cmd->add_option("logs", flags->logs, "log files ('-' = stdin)")->required();
  cmd->add_flag("--rounds-table", flags->rounds_table, "per-dispatch table of the busiest callable");
  cmd->add_flag("--tree", flags->tree, "per-callable tree of median stage durations");
  cmd->add_option("--chrome", flags->chrome, "write Chrome trace-event JSON (Perfetto) to this file");
  cmd->add_option("--html", flags->html,
                  "write one self-contained HTML page: heat map of the matrix, per-rank distributions, a swimlane");
  cmd->add_flag("--json", flags->json, "print the machine-readable report instead of text");
  cmd->add_option("--expect-ranks", flags->ranks, "expected number of ranks")->check(int_in(1, trace::kMaxRanks));
  cmd->add_option("--expect-rounds", flags->rounds, "expected measured rounds per rank")
      ->check(int_in(1, trace::kMaxRounds));
  cmd->add_option("--warmup", flags->warmup, "leading rounds per rank to exclude")->check(int_in(0, trace::kMaxWarmup));
  cmd->add_option("--dispatches-per-round", flags->dispatches, "chip.run dispatches per round (default: inferred)")
      ->check(int_in(1, trace::kMaxDispatchesPerRound));
  cmd->add_option("--rank-by", flags->rank_by, "rank identity: auto, pid or attr (rank= on chip.run)")
      ->check(CLI::IsMember({"auto", "pid", "attr"}));
  cmd->add_flag("--allow-discarded", flags->allow_discarded,
                "do not fail the verdict for dispatches left out of the matrix "
                "(unusable or extra ranks, extra rounds)");
  cmd->add_option("--require", flags->require, "spans a valid cell needs: comma list of root, orch, sched, or none");
  cmd->add_option("--root", flags->names.root, "name of the run span")->capture_default_str();
  cmd->add_option("--orch", flags->names.orch, "dotted suffix of the orchestrator window")->capture_default_str();
  cmd->add_option("--sched", flags->names.sched, "dotted suffix of the scheduler window")->capture_default_str();
  cmd->add_option("--device-wall", flags->names.device_wall, "dotted suffix of the device window")
      ->capture_default_str();
  return {cmd, [flags] { return run_trace(*flags); }};
}

}  // namespace taskring::cli
