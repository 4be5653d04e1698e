// `taskring orch FILE.cpp|FILE.so [options]`: runs an upstream-style
// orchestration as it is.
//
// A .cpp is compiled with the system compiler against taskring's headers
// (cached by content hash, orch_compile.hpp); a .so is loaded directly. The
// entry arguments come from --tensor and --scalar in order (tensors first);
// --kernel ID=NAME maps the source's func ids to built-in kernels or kernel
// libraries ('*=NAME' maps every id not named otherwise). After the run the
// out / inout tensors (or those named by --print) are summarised, --save
// writes them as .npy, --json prints one JSON object instead.
// Exit status: 0 the run succeeded; 2 usage error (bad spec, unknown kernel
// name, unmapped id); 1 compile error or failed run.
// `--check PATH...` only compiles (orch_check.hpp).
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "orch_args.hpp"
#include "orch_check.hpp"
#include "orch_compile.hpp"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/chip/error_codes.hpp"
#include "taskring/chip/ring_config.hpp"
#include "taskring/device/sim_device.hpp"
#include "taskring/kernels/builtin.hpp"

namespace taskring::cli {
namespace {

namespace fs = std::filesystem;
using orch::Direction;
using orch::HostTensor;

struct OrchOptions {
  std::vector<std::string> files;  // one to run; any number with --check
  bool check = false;
  std::string runtime = "tmr";
  std::string arch;
  std::vector<std::string> kernels, tensors, scalars, prints, defines;
  std::string save_dir;
  std::string include_dir = TASKRING_ORCH_INCLUDE_DIR;
  std::string cache_dir;
  std::string entry = "aicpu_orchestration_entry";
  std::string config = "aicpu_orchestration_config";
  bool json = false;
  uint64_t task_window = 0, heap = 0, dep_pool = 0;
  std::string sanitize;  // TASKRING_SANITIZE for this run (docs/sanitizer.md)
};


// A kernel that does nothing: '*=noop' runs an orchestration for its
// dependencies only.
extern "C" void taskring_orch_noop_kernel(int64_t*) {}

const std::map<std::string, taskring_kernel_fn>& builtin_kernels() {
  static const std::map<std::string, taskring_kernel_fn> k = {
      {"noop", taskring_orch_noop_kernel},
      {"add", kernels::taskring_builtin_add},
      {"add_scalar", kernels::taskring_builtin_add_scalar},
      {"mul", kernels::taskring_builtin_mul},
      {"copy", kernels::taskring_builtin_copy},
      {"cast", kernels::taskring_builtin_cast},
      {"matmul", kernels::taskring_builtin_matmul},
      {"rmsnorm", kernels::taskring_builtin_rmsnorm},
      {"softmax", kernels::taskring_builtin_softmax},
      {"rope", kernels::taskring_builtin_rope},
      {"swiglu", kernels::taskring_builtin_swiglu},
      {"topk_gating", kernels::taskring_builtin_topk_gating},
      {"gather_rows", kernels::taskring_builtin_gather_rows},
      {"scatter_add_rows", kernels::taskring_builtin_scatter_add_rows},
      {"paged_attention_decode", kernels::taskring_builtin_paged_attention_decode},
  };
  return k;
}

Expected<KernelBinding> binding_for(int32_t id, const std::string& name) {
  KernelBinding b;
  b.func_id = id;
  b.name = name;
  if (name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0) {
    b.library = name;
    return b;
  }
  auto it = builtin_kernels().find(name);
  if (it == builtin_kernels().end()) {
    std::string known;
    for (const auto& [n, fn] : builtin_kernels()) known += (known.empty() ? "" : ", ") + n;
    return invalid_argument("--kernel " + std::to_string(id) + "=" + name + ": unknown kernel '" + name +
                            "' (built-ins: " + known + "; or a kernel library path ending in .so)");
  }
  b.fn = it->second;
  return b;
}

Expected<std::vector<KernelBinding>> parse_kernels(const std::vector<std::string>& specs) {
  std::map<int32_t, std::string> named;
  std::string wildcard;
  for (const std::string& s : specs) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size()) {
      return invalid_argument("--kernel " + s + ": expected ID=NAME or '*=NAME'");
    }
    const std::string id = s.substr(0, eq), name = s.substr(eq + 1);
    if (id == "*") {
      if (!wildcard.empty()) return invalid_argument("--kernel " + s + ": '*' is already mapped to '" + wildcard + "'");
      wildcard = name;
      continue;
    }
    char* end = nullptr;
    const long v = std::strtol(id.c_str(), &end, 10);
    if (*end != '\0' || v < 0 || v >= kernels::builtin_id::kBuiltinBase) {
      return invalid_argument("--kernel " + s + ": func id '" + id + "' is not in 0.." +
                              std::to_string(kernels::builtin_id::kBuiltinBase - 1));
    }
    if (!named.emplace(static_cast<int32_t>(v), name).second) {
      return invalid_argument("--kernel " + s + ": func id " + id + " is already mapped to '" +
                              named[static_cast<int32_t>(v)] + "'");
    }
  }
  std::vector<KernelBinding> out;
  for (const auto& [id, name] : named) {
    auto b = binding_for(id, name);
    if (!b.ok()) return b.status();
    out.push_back(*b);
  }
  if (!wildcard.empty()) {
    for (int32_t id = 0; id < kernels::builtin_id::kBuiltinBase; ++id) {
      if (named.count(id)) continue;
      auto b = binding_for(id, wildcard);
      if (!b.ok()) return b.status();
      out.push_back(*b);
    }
  }
  return out;
}

const char* dir_name(Direction d) { return d == Direction::kIn ? "in" : d == Direction::kOut ? "out" : "inout"; }

// The runtime code in a failed run's status ("run of 'X': NAME: ..."), or
// -1 when the run failed before the runtime (bad arguments, load errors).
int32_t error_code_of(const Status& s) {
  const std::string& m = s.message();
  for (int32_t c = 1; c < 300; ++c) {
    const std::string_view n = pto2_error_name(c);
    if (n == "UNKNOWN_ERROR") continue;
    if (m.find("': " + std::string(n) + ": ") != std::string::npos) return c;
  }
  return -1;
}

int fail(const OrchOptions& o, int code, const std::string& message, nlohmann::json* j) {
  if (o.json) {
    (*j)["ok"] = false;
    (*j)["error"] = message;
    std::cout << j->dump(2) << "\n";
  } else {
    std::cerr << "taskring orch: " << message << "\n";
  }
  return code;
}

// The -D list of a build: the user's, then the runtime's (the launch spec of
// an a5 build follows the runtime's own a5 header, taskring/tensor/task_args.hpp)
// and the architecture's.
Expected<std::vector<std::string>> build_defines(const OrchOptions& o) {
  std::vector<std::string> defines = o.defines;
  defines.push_back(o.runtime == "hbg" ? "TASKRING_ORCH_RUNTIME_HBG" : "TASKRING_ORCH_RUNTIME_TMR");
  if (o.arch == "a2a3") defines.push_back("TASKRING_ORCH_ARCH_A2A3");
  else if (o.arch == "a5") defines.push_back("TASKRING_ORCH_ARCH_A5");
  else if (!o.arch.empty()) return invalid_argument("--arch " + o.arch + ": expected a2a3 or a5");
  return defines;
}

int check_sources(const OrchOptions& o, const std::vector<std::string>& defines) {
  orch::CheckRequest req;
  req.paths = o.files;
  req.include_dir = o.include_dir;
  if (const char* cxx = std::getenv("CXX"); cxx != nullptr && *cxx != '\0') req.compiler = cxx;
  req.defines = defines;
  req.json = o.json;
  return orch::run_check(req);
}

// Prints a successful run: the --print tensors (default: every out / inout)
// summarised, --save, or one JSON object with --json.
int print_result(const OrchOptions& o, const std::vector<HostTensor>& tensors, const std::string& name, uint64_t tasks, nlohmann::json* j) {
  // Which tensors to show: --print names, else every out / inout.
  std::vector<const HostTensor*> shown;
  for (const std::string& wanted : o.prints) {
    const HostTensor* found = nullptr;
    for (const HostTensor& t : tensors) {
      if (t.name == wanted) found = &t;
    }
    if (found == nullptr) return fail(o, 2, "--print " + wanted + ": no tensor of that name", j);
    shown.push_back(found);
  }
  if (o.prints.empty()) {
    for (const HostTensor& t : tensors) {
      if (t.dir != Direction::kIn) shown.push_back(&t);
    }
  }
  if (!o.save_dir.empty()) {
    std::error_code ec;
    fs::create_directories(o.save_dir, ec);
    for (const HostTensor& t : tensors) {
      if (t.dir == Direction::kIn) continue;
      Status s = orch::write_npy(t, (fs::path(o.save_dir) / (t.name + ".npy")).string());
      if (!s.ok()) return fail(o, 1, "--save: " + s.message(), j);
    }
  }
  if (o.json) {
    for (const HostTensor* t : shown) {
      (*j)["tensors"][t->name] = {{"direction", dir_name(t->dir)}, {"summary", orch::summarize(*t)}};
    }
    std::cout << j->dump(2) << "\n";
  } else {
    std::cout << "taskring orch " << name << " on " << o.runtime << ": ok, " << tasks << " tasks\n";
    for (const HostTensor* t : shown) {
      std::cout << "  " << t->name << " (" << dir_name(t->dir) << ") " << orch::summarize(*t) << "\n";
    }
  }
  return 0;
}

int run_orch(const OrchOptions& o) {
  nlohmann::json j;
  j["runtime"] = o.runtime;
  if (o.runtime != "tmr" && o.runtime != "hbg") {
    return fail(o, 2, "--runtime " + o.runtime + ": expected tmr or hbg", &j);
  }
  auto defines = build_defines(o);
  if (!defines.ok()) return fail(o, 2, defines.status().message(), &j);
  if (o.check) return check_sources(o, *defines);
  if (o.files.size() != 1) {
    return fail(o, 2, "expected one orchestration to run (" + std::to_string(o.files.size()) +
                       " given; --check takes several)", &j);
  }
  const std::string file = o.files[0];
  j["file"] = file;

  // Arguments first: a bad spec is a usage error even before compiling.
  std::vector<HostTensor> tensors;
  for (size_t i = 0; i < o.tensors.size(); ++i) {
    auto t = orch::parse_tensor_spec(o.tensors[i], static_cast<int>(i));
    if (!t.ok()) return fail(o, 2, t.status().message(), &j);
    tensors.push_back(std::move(*t));
  }
  std::vector<uint64_t> scalars;
  for (const std::string& s : o.scalars) {
    auto v = orch::parse_scalar(s);
    if (!v.ok()) return fail(o, 2, v.status().message(), &j);
    scalars.push_back(*v);
  }
  auto bindings = parse_kernels(o.kernels);
  if (!bindings.ok()) return fail(o, 2, bindings.status().message(), &j);
  if (Status s = orch::check_tensor_names(tensors); !s.ok()) return fail(o, 2, s.message(), &j);
  // Before any tensor byte is allocated or filled (a 16 GiB tensor fails here at once).
  RingSizes ring_overrides;
  if (o.heap) ring_overrides.heap.fill(o.heap);
  auto rings = resolve_ring_sizes(ring_overrides, process_env());
  if (!rings.ok()) return fail(o, 2, rings.status().message(), &j);
  auto device = SimDeviceConfig::from_env(process_env());
  if (!device.ok()) return fail(o, 2, device.status().message(), &j);
  uint64_t ring_heap = 0;
  for (uint64_t h : rings->heap) ring_heap += h;
  if (Status s = orch::check_device_budget(tensors, device->arena_bytes, ring_heap); !s.ok()) {
    return fail(o, 2, s.message(), &j);
  }
  for (HostTensor& t : tensors) {
    if (Status s = orch::load(t); !s.ok()) return fail(o, 2, s.message(), &j);
  }

  std::string library = file;
  const std::string ext = fs::path(file).extension().string();
  if (ext == ".cpp" || ext == ".cc" || ext == ".cxx") {
    orch::CompileRequest req;
    req.source = file;
    req.include_dir = o.include_dir;
    req.cache_dir = o.cache_dir.empty() ? orch::default_cache_dir(TASKRING_ORCH_CACHE_DIR) : o.cache_dir;
    if (const char* cxx = std::getenv("CXX"); cxx != nullptr && *cxx != '\0') req.compiler = cxx;
    req.defines = *defines;
    auto built = orch::compile_orchestration(req);
    if (!built.ok()) return fail(o, built.status().code() == StatusCode::kNotFound ? 2 : 1, built.status().message(), &j);
    library = built->library;
    j["library"] = library;
    j["cached"] = built->cached;
  } else if (ext != ".so") {
    return fail(o, 2, file + ": expected a .cpp orchestration source or a .so library", &j);
  } else {
    library = fs::absolute(file).string();
  }

  ChipWorkerConfig wc;
  wc.runtime = o.runtime;
  if (!o.sanitize.empty()) setenv("TASKRING_SANITIZE", o.sanitize.c_str(), 1);  // read by ChipWorker::create
  auto worker = ChipWorker::create(wc);
  if (!worker.ok()) return fail(o, 1, worker.status().to_string(), &j);
  ChipCallable callable;
  callable.name = fs::path(file).filename().string();
  callable.orchestration_library = library;
  callable.entry_symbol = o.entry;
  callable.config_symbol = o.config;
  callable.kernels = *bindings;
  auto id = (*worker)->register_callable(callable);
  if (!id.ok()) return fail(o, 1, id.status().to_string(), &j);

  ChipTaskArgs args;
  for (HostTensor& t : tensors) t.bind();
  for (const HostTensor& t : tensors) {
    if (t.dir == Direction::kIn) args.add_input(t.desc);
    else if (t.dir == Direction::kOut) args.add_output(t.desc);
    else args.add_inout(t.desc);
  }
  for (uint64_t s : scalars) args.add_scalar(s);
  if (args.has_error()) return fail(o, 2, args.error_msg(), &j);

  RunConfig rc;
  rc.exact_arg_count = true;  // a stray --tensor or --scalar is a mistake, not an extra argument
  if (o.task_window) rc.rings.task_window.fill(o.task_window);
  if (o.heap) rc.rings.heap.fill(o.heap);
  if (o.dep_pool) rc.rings.dep_pool.fill(o.dep_pool);
  auto report = (*worker)->run(*id, args, rc);
  if (!report.ok()) {
    std::string msg = report.status().to_string();
    const int32_t code = error_code_of(report.status());
    j["error_code"] = code;
    if (code == PTO2_ERROR_UNKNOWN_KERNEL) msg += "\n  (map the func id with --kernel ID=NAME, or '*=noop')";
    if (msg.find("expects") != std::string::npos && msg.find("arguments") != std::string::npos) {
      msg += "\n  (" + std::to_string(tensors.size()) + " --tensor and " + std::to_string(scalars.size()) +
             " --scalar given)";
    }
    if (code >= 0 && !o.json) msg += "\n  (error code " + std::to_string(code) + ")";
    return fail(o, 1, msg, &j);
  }
  j["ok"] = true;
  j["tasks"] = report->stats.tasks_submitted;

  return print_result(o, tensors, callable.name, report->stats.tasks_submitted, &j);
}

}  // namespace

Command add_orch_command(CLI::App& app) {
  auto opts = std::make_shared<OrchOptions>();
  CLI::App* cmd = app.add_subcommand("orch", "run an upstream-style orchestration source (.cpp) or library (.so)");
  cmd->add_option("file", opts->files,
                  "orchestration source (.cpp, compiled and cached) or library (.so); with --check, files or folders")
      ->required();
  cmd->add_flag("--check", opts->check,
                "only compile every source under the given files/folders; one line per file (ok / first error)");
  cmd->add_option("--runtime", opts->runtime, "L2 runtime: tmr or hbg");
  cmd->add_option("--sanitize", opts->sanitize,
                  "orchestration sanitizer: tags, schedule[:N] or tags,schedule[:N] (docs/sanitizer.md); sets TASKRING_SANITIZE");
  cmd->add_option("--arch", opts->arch, "keep one launch_spec spelling: a2a3 (set_block_num) or a5 (the runtime's a5 header: set_core_num on tmr, set_block_num on hbg)");
  cmd->add_option("--kernel", opts->kernels, "ID=NAME: func id to a built-in kernel or a kernel .so; '*=NAME' for the rest");
  cmd->add_option("--tensor", opts->tensors,
                  "[NAME:]in|out|inout:DTYPE[SHAPE][=VALUE|=iota|=rand:SEED|=@FILE.npy], in argument order");
  cmd->add_option("--scalar", opts->scalars, "[i32|u32|i64|u64|f32|f64:]VALUE, after the tensors");
  cmd->add_option("--print", opts->prints, "summarise this tensor (default: every out/inout)");
  cmd->add_option("--save", opts->save_dir, "write out/inout tensors to DIR/NAME.npy");
  cmd->add_flag("--json", opts->json, "print one JSON object");
  cmd->add_option("-D,--define", opts->defines, "NAME[=VALUE] for compiling a .cpp");
  cmd->add_option("--include-dir", opts->include_dir, "taskring's include directory for compiling a .cpp");
  cmd->add_option("--cache-dir", opts->cache_dir, "where compiled libraries are cached");
  cmd->add_option("--entry", opts->entry, "entry symbol");
  cmd->add_option("--config", opts->config, "config symbol (optional in the library)");
  cmd->add_option("--ring-task-window", opts->task_window, "PTO2_RING_TASK_WINDOW for every ring");
  cmd->add_option("--ring-heap", opts->heap, "PTO2_RING_HEAP bytes for every ring");
  cmd->add_option("--ring-dep-pool", opts->dep_pool, "PTO2_RING_DEP_POOL for every ring");
  return {cmd, [opts] { return run_orch(*opts); }};
}

}  // namespace taskring::cli
