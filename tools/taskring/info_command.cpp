// `taskring info [--json]`: version, build type, sim topology, and every knob
// with the value in effect and where it came from.
//
// Every knob of the knob table (taskring/base/knob_table.hpp) is listed and
// validated here exactly as the component that reads it does (the same
// functions and bounds), so an invalid environment fails `info` the same way
// it would fail a run: message on stderr, exit status 1.
// `--knobs-markdown` prints the knob tables of docs/knobs.md.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "taskring/base/knob_table.hpp"
#include "taskring/base/knobs.hpp"
#include "taskring/chip/ring_config.hpp"
#include "taskring/chip/sanitize_mode.hpp"
#include "taskring/device/sim_device.hpp"
#include "taskring/kernels/tile_matmul.hpp"
#include "taskring/log/level.hpp"

namespace taskring::cli {
namespace {

struct KnobRow {
  std::string name;
  std::string value;   // in effect
  std::string source;  // "default" or "env" (with the alias that was set)
  std::string meaning;
};

std::string source_of(const EnvLookup& env, const char* name) { return env(name) ? "env" : "default"; }

std::string join(const std::array<uint64_t, kRingLevels>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

struct Info {
  SimDeviceConfig sim;
  std::vector<KnobRow> knobs;
  tile::BlasInfo blas;
  std::string blas_replaced;  // the generic kernel set the tool replaced, if it did
};

Expected<Info> collect(const EnvLookup& env) {
  Info info;
  TASKRING_ASSIGN_OR_RETURN(info.sim, SimDeviceConfig::from_env(env));
  info.blas = tile::blas_info();
  if (const char* r = std::getenv(kBlasReplacedEnv)) info.blas_replaced = r;
  const Topology& t = info.sim.topology;
  info.knobs.push_back({kSimClustersKnob, std::to_string(t.clusters), source_of(env, kSimClustersKnob),
                        "clusters of 1 AIC + 2 AIV on the sim chip"});
  info.knobs.push_back({kSimThreadsKnob, std::to_string(t.executor_threads), source_of(env, kSimThreadsKnob),
                        "host threads that run kernels"});
  info.knobs.push_back({kSimLinkKnob, info.sim.link.describe(), source_of(env, kSimLinkKnob),
                        "H2D/D2H cost model charged per copy call"});
  info.knobs.push_back({kSimDeviceMemKnob, std::to_string(info.sim.arena_bytes >> 20),
                        source_of(env, kSimDeviceMemKnob), "sim device memory (MiB of reserved arena)"});

  TASKRING_ASSIGN_OR_RETURN(log::Level level, log::read_level_knob(env));
  info.knobs.push_back({std::string(log::kLogLevelVar),
                        std::string(log::level_name(level)) + " (" + std::to_string(static_cast<int>(level)) + ")",
                        source_of(env, "TASKRING_LOG_LEVEL"), "logger threshold"});
  std::optional<std::string> strace = env("TASKRING_STRACE_DIR");
  struct stat st;
  if (strace && (::stat(strace->c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || ::access(strace->c_str(), W_OK) != 0)) {
    return invalid_argument("TASKRING_STRACE_DIR='" + *strace + "': expected an existing writable directory");
  }
  info.knobs.push_back({"TASKRING_STRACE_DIR", strace ? *strace : "(unset: spans go to stderr)",
                        strace ? "env" : "default", "per-process STRACE span files"});

  std::string used;
  TASKRING_ASSIGN_OR_RETURN(auto skip,
                            read_bool_knob_any(env, {"TASKRING_SKIP_DEVICE_RUN", "SIMPLER_SKIP_DEVICE_RUN"}, &used));
  info.knobs.push_back({"TASKRING_SKIP_DEVICE_RUN", skip.value_or(false) ? "1" : "0",
                        skip ? "env (" + used + ")" : "default",
                        "prepare everything, skip device execution (alias SIMPLER_SKIP_DEVICE_RUN)"});

  TASKRING_ASSIGN_OR_RETURN(RingSizes rings, resolve_ring_sizes(RingSizes{}, env));
  info.knobs.push_back({"PTO2_RING_TASK_WINDOW", join(rings.task_window), source_of(env, "PTO2_RING_TASK_WINDOW"),
                        "task slots per ring (read by the tmr runtime)"});
  info.knobs.push_back({"PTO2_RING_HEAP", join(rings.heap), source_of(env, "PTO2_RING_HEAP"),
                        "heap bytes per ring (read by the tmr runtime)"});
  info.knobs.push_back({"PTO2_RING_DEP_POOL", join(rings.dep_pool), source_of(env, "PTO2_RING_DEP_POOL"),
                        "dependency-list entries per ring (read by the tmr runtime)"});

  TASKRING_ASSIGN_OR_RETURN(sanitize::SanitizeMode san, sanitize::read_sanitize_mode(env));
  info.knobs.push_back({"TASKRING_SANITIZE", san.describe(), source_of(env, "TASKRING_SANITIZE"), ""});

  // The rest of the table, generically by kind: every knob a run reads is
  // shown and validated.
  for (const KnobSpec& k : knob_table()) {
    bool listed = false;
    for (const KnobRow& r : info.knobs) listed = listed || r.name == k.name;
    if (listed) continue;
    std::string def(k.default_doc);
    std::erase(def, '`');
    KnobRow row{std::string(k.name), def, source_of(env, std::string(k.name).c_str()), ""};
    if (k.kind == KnobKind::kInt) {
      TASKRING_ASSIGN_OR_RETURN(auto v, read_int_knob(env, k));
      if (v) row.value = std::to_string(*v);
    } else if (k.kind == KnobKind::kBool) {
      std::string used_name;
      TASKRING_ASSIGN_OR_RETURN(auto v, read_bool_knob(env, k, &used_name));
      if (v) row.value = *v ? "1" : "0";
      if (v) row.source = "env (" + used_name + ")";
    } else {
      return internal_error("taskring info: knob " + row.name + " has no validator");
    }
    info.knobs.push_back(std::move(row));
  }
  // Meanings come from the table too (one wording for info and the docs).
  for (KnobRow& r : info.knobs) r.meaning = std::string(knob(r.name).help);
  return info;
}

nlohmann::json to_json(const Info& info) {
  const Topology& t = info.sim.topology;
  nlohmann::json j;
  j["version"] = TASKRING_VERSION;
  j["build_type"] = TASKRING_BUILD_TYPE;
  j["device"] = {
      {"name", "sim"},
      {"clusters", t.clusters},
      {"aic", t.aic_count()},
      {"aiv", t.aiv_count()},
      {"cores", t.core_count()},
      {"executor_threads", t.executor_threads},
      {"arena_bytes", info.sim.arena_bytes},
      {"link",
       {{"enabled", info.sim.link.enabled},
        {"latency_us", info.sim.link.latency_us},
        {"gbytes_per_s", info.sim.link.gbytes_per_s},
        {"model", info.sim.link.describe()}}},
  };
  j["blas"] = {{"config", info.blas.config},
               {"core", info.blas.core},
               {"replaced", info.blas_replaced},
               {"advice", info.blas.advice}};
  j["knobs"] = nlohmann::json::array();
  for (const KnobRow& k : info.knobs) {
    j["knobs"].push_back({{"name", k.name}, {"value", k.value}, {"source", k.source}, {"meaning", k.meaning}});
  }
  return j;
}

void print_text(const Info& info) {
  const Topology& t = info.sim.topology;
  std::printf("taskring %s (%s)\n\n", TASKRING_VERSION, TASKRING_BUILD_TYPE);
  std::printf("device: sim\n");
  std::printf("  clusters          %d (%d AIC + %d AIV = %d cores)\n", t.clusters, t.aic_count(), t.aiv_count(),
              t.core_count());
  std::printf("  executor threads  %d\n", t.executor_threads);
  std::printf("  arena             %llu MiB (reserved virtual memory, committed on touch)\n",
              static_cast<unsigned long long>(info.sim.arena_bytes >> 20));
  std::printf("  link model        %s\n\n", info.sim.link.describe().c_str());
  std::printf(
      "math:\n  BLAS              %s\n  BLAS kernels      %s%s\n", info.blas.config.c_str(), info.blas.core.c_str(),
      info.blas_replaced.empty()
          ? ""
          : (" (set by taskring through OPENBLAS_CORETYPE; OpenBLAS picked " + info.blas_replaced + ")").c_str());
  if (!info.blas.advice.empty()) std::printf("  warning           %s\n", info.blas.advice.c_str());
  std::printf("\n");
  size_t wn = 4, wv = 5, ws = 6;
  for (const KnobRow& k : info.knobs) {
    wn = std::max(wn, k.name.size());
    wv = std::max(wv, k.value.size());
    ws = std::max(ws, k.source.size());
  }
  std::printf("knobs:\n  %-*s  %-*s  %-*s  %s\n", static_cast<int>(wn), "NAME", static_cast<int>(wv), "VALUE",
              static_cast<int>(ws), "SOURCE", "MEANING");
  for (const KnobRow& k : info.knobs) {
    std::printf("  %-*s  %-*s  %-*s  %s\n", static_cast<int>(wn), k.name.c_str(), static_cast<int>(wv), k.value.c_str(),
                static_cast<int>(ws), k.source.c_str(), k.meaning.c_str());
  }
}

}  // namespace

Command add_info_command(CLI::App& app) {
  struct InfoOptions {
    bool json = false;
    bool markdown = false;
  };
  auto opts = std::make_shared<InfoOptions>();
  auto* cmd = app.add_subcommand("info", "version, build type, sim topology, knobs in effect");
  cmd->add_flag("--json", opts->json, "print as JSON");
  cmd->add_flag("--knobs-markdown", opts->markdown,
                "print the knob tables of docs/knobs.md (generated from the knob table)");
  return {cmd, [opts] {
            if (opts->markdown) {
              std::cout << knob_table_markdown();
              return 0;
            }
            Expected<Info> info = collect(process_env());
            if (!info.ok()) {
              std::fprintf(stderr, "taskring info: %s\n", info.status().to_string().c_str());
              return 1;
            }
            if (opts->json) {
              std::cout << to_json(*info).dump(2) << "\n";
            } else {
              print_text(*info);
            }
            return 0;
          }};
}

}  // namespace taskring::cli
