// `taskring run <workload> [--rounds N] [--warmup W] [--json] [workload flags]`
// and `taskring run --list`.
//
// Runs a catalog workload (workloads/catalog) on a sim ChipWorker built from
// the environment: `warmup` rounds, then `rounds` measured rounds, checking
// the golden after every one. Prints one row per round (host run time, the
// orchestrator and scheduler windows of RunReport.stats, tasks, H2D/D2H
// copies, max abs error) as a table, or everything as JSON with --json.
// Exit status: 0 only when every round ran and passed its golden; 2 for a
// usage error (unknown flag or workload, a parameter out of range or
// inconsistent with another); 1 for a failed run or a golden mismatch.
// Under TASKRING_SKIP_DEVICE_RUN nothing executes, so the golden is reported
// as skipped rather than failed (a timing harness, not a test).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/workloads/catalog.hpp"
#include "taskring/workloads/round.hpp"

namespace taskring::cli {
namespace {

using workloads::RoundResult;
using workloads::Workload;

// One workload object per catalog entry, beside the subcommand that names it:
// its ParamSet holds the values of the workload's flags.
using WorkloadCommands = std::vector<std::pair<CLI::App*, std::unique_ptr<Workload>>>;

struct Row {
  int index = 0;  // 0-based among warmup + measured rounds
  bool warmup = false;
  RoundResult r;
  bool golden_skipped = false;
};

uint64_t window(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }
double ms(uint64_t ns) { return static_cast<double>(ns) / 1e6; }
double mib(uint64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }
bool passed(const Row& row) { return row.golden_skipped || row.r.golden.ok(); }

void print_list(const WorkloadCommands& workloads) {
  for (const auto& [cmd, w] : workloads) {
    std::printf("%-16s %s\n", std::string(w->name()).c_str(), std::string(w->summary()).c_str());
    for (const workloads::Param& p : w->params().entries())
      std::printf("    --%-14s %-8lld %s [%lld, %lld]\n", p.name.c_str(), static_cast<long long>(p.value),
                  p.help.c_str(), static_cast<long long>(p.min), static_cast<long long>(p.max));
  }
}

void print_header(const Workload& w, const Topology& t) {
  std::printf("taskring run %s: %s\n", std::string(w.name()).c_str(), w.params().describe().c_str());
  std::printf("  %llu kernel tasks per run; sim: %d clusters (%d cores), %d executor threads\n\n",
              static_cast<unsigned long long>(w.expected_tasks()), t.clusters, t.core_count(), t.executor_threads);
  std::printf("%-7s %10s %10s %10s %7s %5s %9s %5s %9s %12s  %s\n", "round", "host_ms", "orch_ms", "sched_ms", "tasks",
              "h2d", "h2d_MiB", "d2h", "d2h_MiB", "max_abs_err", "golden");
}

void print_row(const Row& row) {
  const RunReport& rep = row.r.report;
  const std::string label = row.warmup ? "warm" + std::to_string(row.index) : std::to_string(row.index);
  const std::string golden = row.golden_skipped ? "skipped" : row.r.golden.ok() ? "PASS" : "FAIL";
  std::printf("%-7s %10.3f %10.3f %10.3f %7llu %5llu %9.3f %5llu %9.3f %12.3g  %s\n", label.c_str(),
              ms(row.r.host_run_ns), ms(window(rep.stats.orch_start_ns, rep.stats.orch_end_ns)),
              ms(window(rep.stats.sched_start_ns, rep.stats.sched_end_ns)),
              static_cast<unsigned long long>(rep.stats.tasks_completed),
              static_cast<unsigned long long>(rep.h2d_calls), mib(rep.h2d_bytes),
              static_cast<unsigned long long>(rep.d2h_calls), mib(rep.d2h_bytes),
              row.golden_skipped ? NAN : row.r.stats.max_abs_err, golden.c_str());
  if (!passed(row)) std::printf("        %s\n", row.r.golden.to_string().c_str());
}

// Median / min / max host run time over the measured rounds.
struct Summary {
  int measured = 0, passed = 0;
  double median_ms = 0, min_ms = 0, max_ms = 0;
};

Summary summarise(const std::vector<Row>& rows) {
  Summary s;
  std::vector<double> t;
  for (const Row& row : rows) {
    if (row.warmup) continue;
    ++s.measured;
    s.passed += passed(row) ? 1 : 0;
    t.push_back(ms(row.r.host_run_ns));
  }
  if (t.empty()) return s;
  std::sort(t.begin(), t.end());
  s.median_ms = t.size() % 2 ? t[t.size() / 2] : (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2;
  s.min_ms = t.front();
  s.max_ms = t.back();
  return s;
}

// Bytes per second of one memcpy between two 64 MiB host buffers (both
// touched first), median of 5: the bandwidth the staging bound charges.
double memcpy_bytes_per_s() {
  constexpr size_t kBytes = size_t{64} << 20;
  std::vector<char> a(kBytes, 1), b(kBytes, 2);
  std::vector<double> s;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    std::memcpy(b.data(), a.data(), kBytes);
    asm volatile("" : : "g"(b.data()) : "memory");
    s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(s.begin(), s.end());
  return kBytes / s[s.size() / 2];
}

std::string loadavg() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

// What a round would cost if the host added nothing: the device window
// (first dispatch .. last completion) plus every staged byte copied once at
// memcpy speed. host_run_ns / bound is the host's overhead factor.
double staging_bound_ns(const Row& row, double memcpy_bps) {
  const RunReport& rep = row.r.report;
  return static_cast<double>(window(rep.stats.sched_start_ns, rep.stats.sched_end_ns)) +
         static_cast<double>(rep.h2d_bytes + rep.d2h_bytes) / memcpy_bps * 1e9;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Same-run comparisons printed after the rounds: the staging bound and, when
// the workload has one, its library yardstick.
struct Comparison {
  std::string load_before, load_after;
  double memcpy_gbs = 0;
  double host_ms = 0, device_ms = 0, bound_ms = 0, host_over_bound = 0;  // medians over measured rounds
  std::optional<workloads::Yardstick> yard;
  double ours_gflops = 0, ours_host_gflops = 0, yard_gflops = 0;  // ours: over the device window / host run time
};

Comparison compare(Workload& w, const std::vector<Row>& rows, const std::string& load_before) {
  Comparison c;
  c.load_before = load_before;
  const double bps = memcpy_bytes_per_s();
  c.memcpy_gbs = bps / 1e9;
  std::vector<double> host, dev, bound, ratio;
  for (const Row& row : rows) {
    if (row.warmup) continue;
    const double b = staging_bound_ns(row, bps);
    host.push_back(static_cast<double>(row.r.host_run_ns));
    dev.push_back(static_cast<double>(window(row.r.report.stats.sched_start_ns, row.r.report.stats.sched_end_ns)));
    bound.push_back(b);
    ratio.push_back(b > 0 ? static_cast<double>(row.r.host_run_ns) / b : 0);
  }
  c.host_ms = median(host) / 1e6;
  c.device_ms = median(dev) / 1e6;
  c.bound_ms = median(bound) / 1e6;
  c.host_over_bound = median(ratio);
  c.yard = w.yardstick(7);
  if (c.yard && c.yard->median_ns > 0 && c.device_ms > 0) {
    c.yard_gflops = c.yard->flops / c.yard->median_ns;
    c.ours_gflops = c.yard->flops / (c.device_ms * 1e6);
    c.ours_host_gflops = c.yard->flops / (c.host_ms * 1e6);
  }
  c.load_after = loadavg();
  return c;
}

void print_comparison(const Comparison& c) {
  std::printf("\nsame-run comparison (loadavg before %s, after %s):\n", c.load_before.c_str(), c.load_after.c_str());
  std::printf(
      "  memcpy %.2f GB/s; medians: host %.3f ms, device %.3f ms, device + staged bytes / memcpy %.3f ms, "
      "host / that %.2fx\n",
      c.memcpy_gbs, c.host_ms, c.device_ms, c.bound_ms, c.host_over_bound);
  if (c.yard)
    std::printf(
        "  %s: %.3f ms = %.2f GFLOP/s; ours: device window %.2f GFLOP/s = %.2fx of it, host run %.2f GFLOP/s = "
        "%.2fx\n",
        c.yard->name.c_str(), c.yard->median_ns / 1e6, c.yard_gflops, c.ours_gflops,
        c.yard_gflops > 0 ? c.ours_gflops / c.yard_gflops : 0, c.ours_host_gflops,
        c.yard_gflops > 0 ? c.ours_host_gflops / c.yard_gflops : 0);
}

nlohmann::json comparison_json(const Comparison& c) {
  nlohmann::json j = {{"loadavg_before", c.load_before},
                      {"loadavg_after", c.load_after},
                      {"memcpy_gbytes_per_s", c.memcpy_gbs},
                      {"median_host_ms", c.host_ms},
                      {"median_device_ms", c.device_ms},
                      {"median_staging_bound_ms", c.bound_ms},
                      {"median_host_over_staging_bound", c.host_over_bound}};
  if (c.yard)
    j["yardstick"] = {{"name", c.yard->name},
                      {"flops", c.yard->flops},
                      {"median_ms", c.yard->median_ns / 1e6},
                      {"reps", c.yard->reps},
                      {"gflops", c.yard_gflops},
                      {"ours_gflops", c.ours_gflops},
                      {"ours_over_yardstick", c.yard_gflops > 0 ? c.ours_gflops / c.yard_gflops : 0},
                      {"ours_host_gflops", c.ours_host_gflops},
                      {"ours_host_over_yardstick", c.yard_gflops > 0 ? c.ours_host_gflops / c.yard_gflops : 0}};
  return j;
}

nlohmann::json row_json(const Row& row) {
  const RunReport& rep = row.r.report;
  const workloads::GoldenStats& g = row.r.stats;
  return {{"round", row.index},
          {"warmup", row.warmup},
          {"host_run_ns", row.r.host_run_ns},
          {"orch_ns", window(rep.stats.orch_start_ns, rep.stats.orch_end_ns)},
          {"sched_ns", window(rep.stats.sched_start_ns, rep.stats.sched_end_ns)},
          {"bind_ns", rep.bind_ns},
          {"run_ns", rep.run_ns},
          {"validate_ns", rep.validate_ns},
          {"tasks_submitted", rep.stats.tasks_submitted},
          {"tasks_completed", rep.stats.tasks_completed},
          {"kernel_tasks", rep.stats.kernel_tasks},
          {"kernel_calls", rep.stats.kernel_calls},
          {"orch_blocked", rep.stats.orch_blocked},
          {"h2d_calls", rep.h2d_calls},
          {"h2d_bytes", rep.h2d_bytes},
          {"d2h_calls", rep.d2h_calls},
          {"d2h_bytes", rep.d2h_bytes},
          {"skipped_device_run", rep.skipped_device_run},
          {"graph",
           {{"host_tasks", rep.graph.host_tasks},
            {"graph_tasks", rep.graph.graph_tasks},
            {"graph_nodes_run", rep.graph.graph_nodes_run},
            {"definitions_used", rep.graph.definitions_used},
            {"definitions_recorded", rep.graph.definitions_recorded},
            {"nodes_recorded", rep.graph.nodes_recorded},
            {"host_orch_ns", rep.graph.host_orch_ns},
            {"record_ns", rep.graph.record_ns},
            {"graph_upload_calls", rep.graph.graph_upload_calls},
            {"graph_upload_bytes", rep.graph.graph_upload_bytes},
            {"graph_upload_ns", rep.graph.graph_upload_ns},
            {"arena_h2d_calls", rep.graph.arena_h2d_calls},
            {"arena_h2d_bytes", rep.graph.arena_h2d_bytes},
            {"arena_h2d_ns", rep.graph.arena_h2d_ns},
            {"arena_fallback_submissions", rep.graph.arena_fallback_submissions},
            {"image_h2d_calls", rep.graph.image_h2d_calls},
            {"image_h2d_bytes", rep.graph.image_h2d_bytes},
            {"image_h2d_ns", rep.graph.image_h2d_ns}}},
          {"golden",
           {{"status", row.golden_skipped  ? "skipped"
                       : row.r.golden.ok() ? "pass"
                                           : "fail"},
            {"checked", g.checked},
            {"mismatches", g.mismatches},
            {"max_abs_err", g.max_abs_err},
            {"max_rel_err", g.max_rel_err},
            {"atol", g.tol.atol},
            {"rtol", g.tol.rtol},
            {"message", row.r.golden.ok() ? "" : row.r.golden.message()}}}};
}

nlohmann::json report_json(const Workload& w, const Topology& t, const std::vector<Row>& rows, const Status& error) {
  nlohmann::json params = nlohmann::json::object();
  for (const workloads::Param& p : w.params().entries()) params[p.name] = p.value;
  nlohmann::json j = {{"workload", std::string(w.name())},
                      {"params", params},
                      {"expected_kernel_tasks", w.expected_tasks()},
                      {"device", {{"name", "sim"}, {"clusters", t.clusters}, {"executor_threads", t.executor_threads}}},
                      {"rounds", nlohmann::json::array()}};
  for (const Row& row : rows) j["rounds"].push_back(row_json(row));
  const Summary s = summarise(rows);
  j["summary"] = {{"measured_rounds", s.measured},
                  {"passed_rounds", s.passed},
                  {"host_run_ms", {{"median", s.median_ms}, {"min", s.min_ms}, {"max", s.max_ms}}}};
  j["error"] = error.ok() ? "" : error.to_string();
  j["passed"] = error.ok() && s.passed == s.measured &&
                std::all_of(rows.begin(), rows.end(), [](const Row& r) { return passed(r); });
  return j;
}

// Runs `w` and prints; returns the exit status.
int run_workload(const RunOptions& o, Workload& w) {
  const std::string who = "taskring run " + std::string(w.name());
  Status setup = w.setup();
  if (!setup.ok()) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), setup.to_string().c_str());
    return setup.code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  ChipWorkerConfig wc{.runtime = o.runtime};
  if (o.skip_device_run) setenv("TASKRING_SKIP_DEVICE_RUN", "1", 1);  // read by ChipWorker::create
  if (!o.sanitize.empty()) setenv("TASKRING_SANITIZE", o.sanitize.c_str(), 1);
  if (o.profile) {
    wc.env = [base = process_env()](std::string_view name) -> std::optional<std::string> {
      return name == "TASKRING_PROFILE" ? std::optional<std::string>("1") : base(name);
    };
  }
  Expected<std::unique_ptr<ChipWorker>> worker = ChipWorker::create(wc);
  if (!worker.ok()) {
    std::fprintf(stderr, "%s: creating the sim worker: %s\n", who.c_str(), worker.status().to_string().c_str());
    return 1;
  }
  Expected<int> id = (*worker)->register_callable(w.callable());
  if (!id.ok()) {
    std::fprintf(stderr, "%s: registering the callable: %s\n", who.c_str(), id.status().to_string().c_str());
    return 1;
  }
  Status placed = w.place_on_device(**worker);
  if (!placed.ok()) {
    std::fprintf(stderr, "%s: placing inputs on the device: %s\n", who.c_str(), placed.to_string().c_str());
    return 1;
  }
  const std::string load_before = loadavg();
  const Topology topo = (*worker)->topology();
  if (!o.json) print_header(w, topo);
  std::vector<Row> rows;
  Status error;
  for (int i = 0; i < o.warmup + o.rounds; ++i) {
    Expected<RoundResult> r = workloads::run_round(**worker, *id, w);
    if (!r.ok()) {
      error = r.status();
      break;
    }
    Row row;
    row.warmup = i < o.warmup;
    row.index = row.warmup ? i : i - o.warmup + 1;
    row.r = std::move(*r);
    row.golden_skipped = row.r.report.skipped_device_run;
    if (!o.json) print_row(row);
    rows.push_back(std::move(row));
  }
  const bool all_pass = error.ok() && std::all_of(rows.begin(), rows.end(), [](const Row& r) { return passed(r); });
  const bool measured = error.ok() && !rows.empty() && !rows.back().golden_skipped;
  if (o.json) {
    nlohmann::json j = report_json(w, topo, rows, error);
    if (measured) j["comparison"] = comparison_json(compare(w, rows, load_before));
    std::cout << j.dump(2) << "\n";
  } else if (!rows.empty() || error.ok()) {  // a run that failed before its first round has nothing to sum up
    const Summary s = summarise(rows);
    std::printf("\n%d of %d measured rounds passed; host_ms median %.3f min %.3f max %.3f\n", s.passed, s.measured,
                s.median_ms, s.min_ms, s.max_ms);
    if (measured) print_comparison(compare(w, rows, load_before));
  }
  if (!error.ok()) std::fprintf(stderr, "%s: %s\n", who.c_str(), error.to_string().c_str());
  if (!all_pass && error.ok()) std::fprintf(stderr, "%s: golden check FAILED\n", who.c_str());
  return all_pass ? 0 : 1;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  auto workloads = std::make_shared<WorkloadCommands>();
  auto* cmd = app.add_subcommand("run", "run a workload on sim, checking its golden every round");
  cmd->add_option("--rounds", opts->rounds, "measured rounds")->capture_default_str()->check(CLI::Range(1, 1000000));
  cmd->add_option("--warmup", opts->warmup, "warmup rounds before them (also checked)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  cmd->add_option(
      "--sanitize", opts->sanitize,
      "orchestration sanitizer: tags, schedule[:N] or tags,schedule[:N] (docs/sanitizer.md); sets TASKRING_SANITIZE");
  cmd->add_option("--runtime", opts->runtime, "L2 runtime: tmr (tensormap_and_ringbuffer) or hbg (host_build_graph)")
      ->capture_default_str()
      ->check(CLI::IsMember({"tmr", "tensormap_and_ringbuffer", "hbg", "host_build_graph"}));
  cmd->add_flag("--json", opts->json, "print the rounds as JSON");
  cmd->add_flag("--list", opts->list, "list the workloads and their parameters");
  cmd->add_flag("--profile", opts->profile,
                "record the per-task device profile (core, cluster, block, kernel, start/end) as spans after each run");
  cmd->require_subcommand(0, 1);
  cmd->allow_extras();  // an unknown workload name is answered below, with the known ones
  for (const workloads::CatalogEntry& e : workloads::catalog()) {
    std::unique_ptr<Workload> w = e.make();
    auto* sub = cmd->add_subcommand(std::string(e.name), std::string(w->summary()));
    sub->fallthrough();  // --rounds / --warmup / --json may follow the workload name
    for (workloads::Param& p : w->params().entries()) add_param_option(sub, p);
    workloads->emplace_back(sub, std::move(w));
  }
  cmd->add_flag("--skip-device-run", opts->skip_device_run,
                "measure the host side alone: TASKRING_SKIP_DEVICE_RUN=1 (nothing executes; golden reported skipped)");
  std::function<int()> run_node = add_node_run_subcommands(cmd, opts);
  return {
      cmd, [cmd, opts, workloads, run_node] {
        if (!cmd->remaining().empty()) {
          const std::string first = cmd->remaining().front();
          std::string known;
          for (const auto& [sub, w] : *workloads) known += (known.empty() ? "" : ", ") + std::string(w->name());
          known += ", " + node_workload_names();
          const std::vector<CLI::App*> subs = cmd->get_subcommands({});
          const bool named = std::any_of(subs.begin(), subs.end(), [](const CLI::App* sub) { return sub->parsed(); });
          if (named) {
            std::fprintf(stderr, "taskring run: unexpected argument '%s'\n", first.c_str());
          } else if (first.empty() || first[0] != '-') {
            std::fprintf(stderr, "taskring run: unknown workload '%s'; known workloads: %s (taskring run --list)\n",
                         first.c_str(), known.c_str());
          } else {
            std::fprintf(stderr, "taskring run: unknown option '%s' (taskring run <workload> --help lists them)\n",
                         first.c_str());
          }
          return 2;
        }
        if (opts->list) {
          print_list(*workloads);
          return 0;
        }
        for (auto& [sub, w] : *workloads) {
          if (sub->parsed()) {
            return run_workload(*opts, *w);
          }
        }
        if (const int rc = run_node(); rc >= 0) return rc;  // node_command.cpp
        std::fprintf(stderr, "taskring run: name a workload (taskring run --list shows them)\n%s", cmd->help().c_str());
        return 2;
      }};
}

}  // namespace taskring::cli
