// `taskring selfcheck [--json]`: exercises the sim device built from the
// environment end to end and prints a PASS/FAIL table. Exit 0 only when every
// check passes.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "taskring/device/sim_device.hpp"

namespace taskring::cli {
namespace {

struct Check {
  std::string name;
  bool pass = false;
  std::string detail;
};

class Checks {
 public:
  bool add(std::string name, bool pass, std::string detail) {
    checks_.push_back({std::move(name), pass, std::move(detail)});
    return pass;
  }
  bool add_status(std::string name, const Status& s, std::string ok_detail) {
    return add(std::move(name), s.ok(), s.ok() ? std::move(ok_detail) : s.to_string());
  }
  // Passes when `s` is the expected error code; the detail is its message.
  bool expect_error(std::string name, const Status& s, StatusCode code) {
    bool pass = s.code() == code;
    std::string detail = s.ok() ? "no error reported" : s.to_string();
    return add(std::move(name), pass,
               pass ? detail : "expected " + std::string(status_code_name(code)) + ", got " + detail);
  }
  bool all_pass() const {
    for (const Check& c : checks_)
      if (!c.pass) return false;
    return !checks_.empty();
  }
  const std::vector<Check>& list() const { return checks_; }

 private:
  std::vector<Check> checks_;
};

constexpr uint64_t kBytes = 1 << 20;

// Runs every check it can; a failed prerequisite stops the ones that need it.
void run_checks(Checks& c) {
  Expected<SimDeviceConfig> cfg = SimDeviceConfig::from_env(process_env());
  if (!c.add_status("config from env", cfg.status(), "TASKRING_SIM_* knobs valid")) return;
  Expected<std::unique_ptr<Device>> made = create_sim_device(*cfg);
  if (!c.add_status("create sim device", made.status(),
                    std::to_string(cfg->topology.core_count()) + " cores, " + std::to_string(cfg->arena_bytes >> 20) +
                        " MiB arena, link " + cfg->link.describe())) {
    return;
  }
  Device& dev = **made;

  Expected<DeviceAddr> a = dev.malloc(kBytes, 4096, "selfcheck");
  if (!c.add_status("malloc 1 MiB", a.status(), "aligned to 4096")) return;
  c.add("address is a device address", dev.is_device_address(*a) && *a % 4096 == 0, "");

  std::vector<uint8_t> in(kBytes), out(kBytes, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 2654435761u >> 24);
  Status h2d = dev.copy_to_device(*a, in.data(), in.size());
  Status d2h = h2d.ok() ? dev.copy_from_device(out.data(), *a, out.size()) : h2d;
  c.add("H2D + D2H round trip", d2h.ok() && in == out,
        d2h.ok() ? (in == out ? "1 MiB identical" : "bytes differ") : d2h.to_string());

  Status ms = dev.memset(*a + 100, 0x7F, 64);
  uint8_t back[64] = {};
  Status rd = ms.ok() ? dev.copy_from_device(back, *a + 100, sizeof(back)) : ms;
  bool filled = rd.ok();
  for (uint8_t b : back) filled = filled && b == 0x7F;
  c.add("memset", filled, rd.ok() ? (filled ? "64 bytes set" : "bytes differ") : rd.to_string());

  c.expect_error("out-of-bounds copy rejected", dev.copy_to_device(*a + kBytes - 8, in.data(), 16),
                 StatusCode::kOutOfRange);

  Expected<DeviceAddr> tmp = dev.malloc(256, 64, "selfcheck-freed");
  if (c.add_status("malloc + free", tmp.ok() ? dev.free(*tmp) : tmp.status(), "256 bytes")) {
    c.expect_error("use after free rejected", dev.copy_from_device(out.data(), *tmp, 16),
                   StatusCode::kFailedPrecondition);
    c.expect_error("double free rejected", dev.free(*tmp), StatusCode::kFailedPrecondition);
  }
  c.expect_error("free of a non-allocation rejected", dev.free(*a + 64), StatusCode::kInvalidArgument);

  Expected<void*> pinned = dev.alloc_pinned(kBytes);
  if (c.add_status("pinned buffer", pinned.status(), "1 MiB, page-aligned")) {
    std::memcpy(*pinned, in.data(), kBytes);
    Status ps = dev.copy_to_device(*a, *pinned, kBytes);
    c.add_status("H2D from pinned", ps, "1 MiB");
    c.add_status("free pinned", dev.free_pinned(*pinned), "");
    c.expect_error("free of unknown pinned pointer rejected", dev.free_pinned(in.data()), StatusCode::kInvalidArgument);
  }

  DeviceCounters k = dev.counters();
  bool counters_ok = k.h2d_calls == 2 && k.h2d_bytes == 2 * kBytes && k.d2h_calls == 2 && k.d2h_bytes == kBytes + 64 &&
                     k.memset_calls == 1 && k.alloc_calls == 2 && k.free_calls == 1 && k.live_allocations == 1 &&
                     k.live_bytes == kBytes && k.peak_bytes == kBytes + 256 && k.pinned_live_bytes == 0;
  char detail[256];
  std::snprintf(detail, sizeof(detail), "h2d %llu calls/%llu B, d2h %llu calls/%llu B, peak %llu B, link %llu ns",
                static_cast<unsigned long long>(k.h2d_calls), static_cast<unsigned long long>(k.h2d_bytes),
                static_cast<unsigned long long>(k.d2h_calls), static_cast<unsigned long long>(k.d2h_bytes),
                static_cast<unsigned long long>(k.peak_bytes), static_cast<unsigned long long>(k.link_charged_ns));
  c.add("counters", counters_ok, detail);
  bool link_ok = cfg->link.enabled ? k.link_charged_ns == 2 * cfg->link.cost_ns(kBytes) + cfg->link.cost_ns(kBytes) +
                                                              cfg->link.cost_ns(64)
                                   : k.link_charged_ns == 0;
  c.add("link model accounting", link_ok, cfg->link.enabled ? "charged per copy" : "off: nothing charged");

  c.add("leak list names the live allocation",
        dev.live_allocations().size() == 1 && dev.live_allocations()[0].tag == "selfcheck", "");
  c.add_status("free", dev.free(*a), "");
  c.add_status("finalize reports no leaks", dev.finalize(), "0 leaks");
}

// Runs the checks and prints them; the exit status is 0 only when all passed.
int run_selfcheck(bool json) {
  Checks c;
  run_checks(c);
  bool pass = c.all_pass();
  if (json) {
    nlohmann::json j;
    j["pass"] = pass;
    j["checks"] = nlohmann::json::array();
    for (const Check& k : c.list()) j["checks"].push_back({{"name", k.name}, {"pass", k.pass}, {"detail", k.detail}});
    std::cout << j.dump(2) << "\n";
  } else {
    size_t w = 5;
    for (const Check& k : c.list()) w = std::max(w, k.name.size());
    std::printf("sim device self-check\n  %-*s  %-6s %s\n", static_cast<int>(w), "CHECK", "RESULT", "DETAIL");
    for (const Check& k : c.list()) {
      std::printf("  %-*s  %-6s %s\n", static_cast<int>(w), k.name.c_str(), k.pass ? "PASS" : "FAIL", k.detail.c_str());
    }
    std::printf("selfcheck: %s\n", pass ? "PASS" : "FAIL");
  }
  return pass ? 0 : 1;
}

}  // namespace

Command add_selfcheck_command(CLI::App& app) {
  struct SelfcheckOptions {
    bool json = false;
  };
  auto opts = std::make_shared<SelfcheckOptions>();
  auto* cmd = app.add_subcommand("selfcheck", "exercise the sim device from the environment; PASS/FAIL table");
  cmd->add_flag("--json", opts->json, "print as JSON");
  return {cmd, [opts] { return run_selfcheck(opts->json); }};
}

}  // namespace taskring::cli
