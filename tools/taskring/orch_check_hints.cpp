// The upstream names `taskring orch --check` recognises in a compiler error:
// names upstream used before 6ebaf7715 and removed since (taskring spells
// them as 6ebaf7715 or later upstream does) and names of newer upstream that
// taskring does not provide. docs/compat.md describes each.
#include <array>
#include <string>
#include <string_view>

#include "orch_check.hpp"

namespace taskring::cli::orch {
namespace {

struct KnownName {
  std::string_view name;
  std::string_view hint;
};

// Older spellings: upstream removed these before 6ebaf7715.
constexpr std::array kOlder = {
    KnownName{"L2TaskArgs", "ChipTaskArgs"},
    KnownName{"L0TaskArgs", "CoreTaskArgs"},
    KnownName{"L0TaskArgsWithDeps", "CoreTaskArgsWithDeps<N>"},
    KnownName{"ChipStorageTaskArgs", "ChipTaskArgs"},
    KnownName{"Arg", "CoreTaskArgs"},
    KnownName{"Tensor", "simpler::tmr::Tensor / simpler::hbg::Tensor (or ChipTensor)"},
    KnownName{"pto2_rt_submit_task", "rt_submit_task"},
    KnownName{"pto2_rt_submit_aic_task", "rt_submit_aic_task"},
    KnownName{"pto2_rt_submit_aiv_task", "rt_submit_aiv_task"},
    KnownName{"pto2_rt_scope_begin", "rt_scope_begin"},
    KnownName{"pto2_rt_scope_end", "rt_scope_end"},
    KnownName{"from_tensor_arg", "orch_args.tensor(i).ref()"},
    KnownName{"from_task_arg", "orch_args.tensor(i).ref()"},
};

// Newer upstream items (after 6ebaf7715) that taskring does not provide:
// runtime-internal hooks of upstream's ops table and its DFX probes.
constexpr std::array kMissing = {
    KnownName{"LOG_TIMING", "use LOG_INFO"},
    KnownName{"RuntimeContext", "taskring's runtime handle is not part of the orchestration API"},
    KnownName{"current_runtime", "taskring's runtime handle is not part of the orchestration API"},
    KnownName{"rt_orchestration_done", "taskring ends the orchestration when the entry returns"},
    KnownName{"rt_record_orch_phase", "taskring's STRACE spans time every task"},
    KnownName{"rt_orch_phase_now_ns", "taskring's STRACE spans time every task"},
    KnownName{"HostPhaseKind", "taskring's STRACE spans time every task"},
    KnownName{"rt_graph_function_id", "rt_submit_graph(fn, args) keys the graph itself"},
    KnownName{"rt_submit_graph_impl", "use rt_submit_graph"},
};

// The quoted identifier of a GCC/Clang diagnostic ("‘X’ was not declared",
// "'X' does not name a type", "no member named 'X'"), or of a missing header.
std::string quoted_name(const std::string& line) {
  if (const auto p = line.find("fatal error: "); p != std::string::npos) {
    const auto start = p + 13;
    const auto end = line.find(':', start);
    return line.substr(start, end == std::string::npos ? std::string::npos : end - start);
  }
  for (const std::string_view open : {"\xe2\x80\x98", "'"}) {
    const std::string_view close = open == "'" ? "'" : "\xe2\x80\x99";
    const auto a = line.find(open);
    if (a == std::string::npos) continue;
    const auto start = a + open.size();
    const auto b = line.find(close, start);
    if (b == std::string::npos) continue;
    std::string name = line.substr(start, b - start);
    // "‘simpler::tmr::X’": the last component names the item.
    if (const auto c = name.rfind("::"); c != std::string::npos) name = name.substr(c + 2);
    return name;
  }
  return "";
}

}  // namespace

std::string hint_for_error(const std::string& error_line) {
  const std::string name = quoted_name(error_line);
  if (name.empty()) return "";
  for (const KnownName& k : kOlder) {
    if (name == k.name) {
      return "upstream name `" + name + "` (removed upstream before 6ebaf7715): taskring spells it " +
             std::string(k.hint) + ", see docs/compat.md";
    }
  }
  for (const KnownName& k : kMissing) {
    if (name == k.name) {
      return "upstream name `" + name + "` (introduced after 6ebaf7715): not provided (" + std::string(k.hint) +
             "), see docs/compat.md";
    }
  }
  if (name.rfind("PTO2_", 0) == 0 || name.rfind("SIMPLER_", 0) == 0 || name.rfind("pto2_", 0) == 0) {
    return "upstream name `" + name + "`: not provided by taskring, see docs/compat.md";
  }
  if (name.size() > 2 && name.compare(name.size() - 2, 2, ".h") == 0) {
    return "upstream header `" + name + "`: taskring provides pto_orchestration_api.h, orchestration_api.h, "
           "pto_arg_with_deps.h and arg_with_deps.h, see docs/compat.md";
  }
  return "";
}

}  // namespace taskring::cli::orch
