#include "taskring/base/knob_table.hpp"

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace taskring {

namespace {

constexpr std::string_view kSim = "Sim device";
constexpr std::string_view kLog = "Logging and tracing";
constexpr std::string_view kRuntime = "Runtime";

// One row per knob. Readers take their bounds from here, so a range is
// written once.
const KnobSpec kKnobs[] = {
    {"TASKRING_SIM_CLUSTERS", "", kSim, KnobKind::kInt, 1, 64, "`8`", "",
     "clusters of the simulated chip; each is 1 AIC + 2 AIV, so 8 → 24 cores"},
    {"TASKRING_SIM_THREADS", "", kSim, KnobKind::kInt, 1, 256, "hardware threads", "",
     "host threads that execute kernels (any core count runs correctly on any thread count)"},
    {"TASKRING_SIM_LINK", "", kSim, KnobKind::kText, 0, 0, "`off`",
     "`off`, `0`, or `<latency_us>,<GB/s>` with latency in [0, 1000000] and GB/s in (0, 10000]",
     "host↔device transfer cost model charged per copy call: latency + bytes / bandwidth (e.g. `17,25`); the "
     "caller waits for the modelled time and it is added to the `link_charged_ns` counter. Benchmarks that use it "
     "say so"},
    {"TASKRING_SIM_DEVICE_MEM_MB", "", kSim, KnobKind::kInt, 1, int64_t{1} << 20, "`16384`", "",
     "size of the sim device arena in MiB (reserved virtual memory, committed only when touched)"},
    {"TASKRING_LOG_LEVEL", "", kLog, KnobKind::kText, 0, 0, "`TIMING` (25)",
     "`DEBUG` 10, `INFO` 20, `TIMING` 25, `WARN` 30, `ERROR` 40, `NUL` 60; names (any case) or those integers",
     "logger threshold: a record is written iff its level ≥ the threshold; `NUL` silences everything (also "
     "orchestration `rt_log` records, on both runtimes)"},
    {"TASKRING_STRACE_DIR", "", kLog, KnobKind::kText, 0, 0, "unset (spans go to stderr)",
     "an existing writable directory; a missing or unwritable one is an error naming it",
     "write STRACE spans to `<dir>/strace.<pid>.log`, one file per process, instead of stderr (see "
     "[logging.md](logging.md))"},
    {"TASKRING_SKIP_DEVICE_RUN", "SIMPLER_SKIP_DEVICE_RUN", kRuntime, KnobKind::kBool, 0, 1, "off",
     "boolean: `1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off` (any case); the `TASKRING_` name wins when both are "
     "set",
     "prepare a run fully (argument staging, orchestration, uploads) but skip device execution; for timing the "
     "host phases only, outputs are not produced"},
    {"PTO2_RING_TASK_WINDOW", "", kRuntime, KnobKind::kIntList, 4, int64_t{1} << 31, "`16384` per ring",
     "one value for all 4 rings, or 4 comma-separated values; each a power of two in [4, 2^31]",
     "task slots per ring (tmr; hbg keeps every task of a run and takes the sum over the rings)"},
    {"PTO2_RING_HEAP", "", kRuntime, KnobKind::kIntList, 1024, int64_t{1} << 40, "`268435456` (256 MiB) per ring",
     "one value or 4 comma-separated; each in [1024, 2^40] bytes",
     "heap ring bytes per ring for runtime-allocated outputs (tmr; hbg uses one heap of the sum)"},
    {"PTO2_RING_DEP_POOL", "", kRuntime, KnobKind::kIntList, 4, int64_t{1} << 31, "`16384` per ring",
     "one value or 4 comma-separated; each in [4, 2^31]",
     "dependency-list pool entries per ring (tmr; hbg bounds a run's edges by the sum)"},
    {"TASKRING_STALL_TIMEOUT_MS", "", kRuntime, KnobKind::kInt, 1, 3600000, "`10000`", "",
     "no-progress backstop: an orchestrator waiting on a full ring for this long with no task retiring fails the "
     "run with `FLOW_CONTROL_DEADLOCK` (tmr); also the time a stopped or destroyed run is given to drain (both "
     "runtimes), and the longest a kernel waits for a co-resident sibling (`kernel_sync.h`) before it fails"},
    {"TASKRING_RUN_INLINE", "", kRuntime, KnobKind::kBool, 0, 1, "unset: the chip picks (tmr)",
     "boolean: `1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off` (any case)",
     "`1`: run each chip run on the thread that launches it: that thread orchestrates and executes the tasks "
     "itself (no orchestrator or executor threads, so no wakes between them; one host thread per chip); on tmr "
     "a task runs inside the submit that finds it ready, which in such a run is every task, in submit order. "
     "An orchestration blocked on a full ring or on "
     "`get_tensor_data` / `set_tensor_data` runs ready tasks itself, and one that can make no progress that way "
     "fails at once with the error the threaded run would reach at its deadline. A kernel that waits for another "
     "task of the same chip (other than its co-resident MIX siblings) cannot finish. `launch` returns when the run "
     "has finished; `TASKRING_RUN_TIMEOUT_MS` does not apply. For processes at least as many as the CPUs (node chip "
     "children). `0`: an orchestrator thread and executor threads. Unset, on tmr, a callable's run 0 goes "
     "threaded and run 1 inline (warm-ups: inline on the orchestrator thread, the executors sitting it out, so the "
     "run timeout still applies), then runs go inline until one threaded probe, run 8; inline is kept unless the probe took under 80 % of the inline run before it, "
     "and the other way is tried again every 64th run (`src/chip/run_mode.hpp`); a callable whose kernel waited "
     "for a sibling stays threaded; hbg "
     "runs threaded. `RunReport::ran_inline` says which way a run went"},
    {"TASKRING_CHIP_PIN", "", kRuntime, KnobKind::kBool, 0, 1, "auto (see text)",
     "boolean: `1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off` (any case)",
     "read by a node (`NodeWorker`) whose `NodeConfig::chip_pin` is `kAuto`: on pins chip child i to CPU (i mod N) "
     "of the N in the node's affinity mask, off leaves every chip child free; unset, the node pins inline chips "
     "that outnumber the CPUs and chips that fit the CPUs one each on one executor thread (docs/node.md)"},
    {"TASKRING_NODE_STALL_TIMEOUT_MS", "", kRuntime, KnobKind::kInt, 0, 3600000, "`30000`", "",
     "read by a node (`NodeWorker`, overriding `NodeConfig::stall_timeout_ms`): a chip or SUB child that stays "
     "stopped (SIGSTOP, SIGTSTP, a debugger) this long is killed and its task fails naming the child and its pid "
     "(checked every quarter of it); 0 turns the check off (e.g. to debug a child) (docs/node.md)"},
    {"TASKRING_TENSOR_WAIT_TIMEOUT_MS", "", kRuntime, KnobKind::kInt, 1, 3600000, "`15000`", "",
     "deadline of `get_tensor_data` / `set_tensor_data` waits (`TENSOR_WAIT_TIMEOUT`)"},
    {"TASKRING_RUN_TIMEOUT_MS", "", kRuntime, KnobKind::kInt, 1, 86400000, "`60000`", "",
     "deadline of `ChipWorker::wait`; a run past it is stopped with `SCHEDULER_TIMEOUT` (overridden per run by "
     "`RunConfig::timeout_ms`). In a node, the parent also kills a chip whose task runs past it plus "
     "`TASKRING_STALL_TIMEOUT_MS` plus 1 s without an answer, inline chips included (docs/node.md, \"Failure "
     "handling\")"},
    {"TASKRING_GRAPH_ARENA_BYTES", "", kRuntime, KnobKind::kInt, 0, int64_t{1} << 34, "`4194304` (4 MiB)", "",
     "pinned arena for the Graph submission images of one hbg run, uploaded in one copy; 0 uploads each "
     "submission on its own"},
    {"TASKRING_PROFILE", "", kRuntime, KnobKind::kBool, 0, 1, "off",
     "boolean: `1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off`",
     "per-task device profile on sim: every kernel call's core, core type, cluster, block, kernel id and start/end "
     "is kept in memory and written after each run as `chip.run.runner_run.core_task` spans (docs/trace.md); "
     "`taskring run --profile` / `taskring bench --profile` set it; off costs one branch per task"},
    {"TASKRING_SANITIZE", "", kRuntime, KnobKind::kText, 0, 0, "`off`",
     "`off`, `tags`, `schedule`, `schedule:N` (N in [2, 1000]) or `tags,schedule[:N]`",
     "orchestration sanitizer on sim ([sanitizer.md](sanitizer.md)): `tags` fails a run (`KERNEL_FAILED`) whose kernel "
     "writes outside its OUTPUT / OUTPUT_EXISTING / INOUT views or reads a page no argument touches (the chip then "
     "runs inline, one task at a time); `schedule` runs each `ChipWorker::run` N times (default 8) under seeded "
     "executor counts, tmr ring sizes and launch delays and fails (`SCHEDULE_MISMATCH`) on the first INOUT / "
     "OUTPUT_EXISTING byte that differs from the first run; `taskring run/orch --sanitize` set it; off costs one "
     "branch per kernel launch"},
    {"TASKRING_SANITIZE_SEED", "", kRuntime, KnobKind::kInt, 1, int64_t{1} << 62, "`1`", "",
     "seed of the first randomized run of `TASKRING_SANITIZE=schedule` (run k uses seed + k - 1); a schedule "
     "mismatch names the seed that reproduces it"},
    {"TASKRING_RANK", "", kRuntime, KnobKind::kInt, 0, int64_t{1} << 20, "unset", "",
     "rank of this process, added as `rank=` to its `chip.run` spans (set by `taskring bench` for each forked "
     "rank)"},
};

}  // namespace

std::span<const KnobSpec> knob_table() { return kKnobs; }

const KnobSpec& knob(std::string_view name) {
  for (const KnobSpec& k : kKnobs) {
    if (k.name == name) return k;
  }
  std::fprintf(stderr, "taskring: knob %.*s is not in the knob table (src/base/knob_table.cpp)\n",
               static_cast<int>(name.size()), name.data());
  std::abort();
}

Expected<std::optional<int64_t>> read_int_knob(const EnvLookup& env, const KnobSpec& spec) {
  return read_int_knob(env, spec.name, spec.min, spec.max);
}

Expected<std::optional<bool>> read_bool_knob(const EnvLookup& env, const KnobSpec& spec, std::string* used_name) {
  std::vector<std::string> names{std::string(spec.name)};
  if (!spec.alias.empty()) names.emplace_back(spec.alias);
  return read_bool_knob_any(env, names, used_name);
}

std::string knob_accepted_text(const KnobSpec& spec) {
  if (!spec.accepted_doc.empty()) return std::string(spec.accepted_doc);
  return "integer in [" + std::to_string(spec.min) + ", " + std::to_string(spec.max) + "]";
}

std::string knob_table_markdown() {
  std::string out;
  std::string_view section;
  for (const KnobSpec& k : kKnobs) {
    if (k.section != section) {
      section = k.section;
      out += (out.empty() ? "" : "\n") + std::string("## ") + std::string(section) + "\n\n";
      out += "| knob | default | accepted values | meaning |\n| --- | --- | --- | --- |\n";
    }
    out += "| `" + std::string(k.name) + "`";
    if (!k.alias.empty()) out += " (alias `" + std::string(k.alias) + "`)";
    out += " | " + std::string(k.default_doc) + " | " + knob_accepted_text(k) + " | " + std::string(k.help) + " |\n";
  }
  return out;
}

}  // namespace taskring
