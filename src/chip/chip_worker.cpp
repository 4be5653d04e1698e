#include "taskring/chip/chip_worker.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <map>
#include <optional>

#include "chip_knobs.hpp"
#include "exec/device_profile.hpp"
#include "exec/kernel_wait.hpp"
#include "l2_runtime.hpp"
#include "run_mode.hpp"
#include "run_spans.hpp"
#include "sanitize/launch_hook.hpp"
#include "sanitize/schedule_fuzz.hpp"
#include "taskring/base/clock.hpp"
#include "taskring/device/sim_device.hpp"
#include "taskring/kernels/builtin.hpp"
#include "taskring/log/strace.hpp"

namespace taskring {

namespace {

struct Library {
  void* handle = nullptr;
  ~Library() {
    if (handle != nullptr) dlclose(handle);
  }
};

Expected<void*> load_symbol(const std::string& path, const std::string& symbol,
                            std::vector<std::unique_ptr<Library>>* keep) {
  auto lib = std::make_unique<Library>();
  lib->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib->handle == nullptr) {
    const char* err = dlerror();
    return not_found("cannot load '" + path + "': " + (err ? err : "unknown dlopen error"));
  }
  dlerror();
  void* sym = dlsym(lib->handle, symbol.c_str());
  if (sym == nullptr) {
    const char* err = dlerror();
    return not_found("'" + path + "' has no symbol '" + symbol + "': " + (err ? err : "not exported"));
  }
  keep->push_back(std::move(lib));
  return sym;
}

struct Registered {
  std::string name;
  OrchestrationEntry entry = nullptr;
  OrchestrationConfigFn config = nullptr;
  BindRuntimeFn bind = nullptr;
  std::vector<taskring_kernel_fn> kernels;  // TASKRING_MAX_FUNC_ID entries
  std::vector<std::string> kernel_names;    // by func id, for the sanitizer's messages
};

struct StagedTensor {
  DeviceAddr dev = 0;
  void* host = nullptr;
  uint64_t bytes = 0;
  bool copy_back = false;
};

bool sizes_equal(const RingSizes& a, const RingSizes& b) {
  return a.task_window == b.task_window && a.heap == b.heap && a.dep_pool == b.dep_pool;
}

}  // namespace

struct ChipWorker::Impl {
  ChipWorkerConfig config;
  std::unique_ptr<Device> device;
  std::unique_ptr<L2Runtime> runtime;  // built at the first prepare, rebuilt when the ring sizes change
  L2RuntimeConfig runtime_config;      // everything but the ring sizes comes from knobs at create
  // TASKRING_RUN_INLINE unset on tmr: each run goes the way `picker` says,
  // an inline one on the runtime's orchestrator thread with the executors
  // sitting it out (RunRequest::tasks_on_orchestrator), so the caller still
  // waits with its run timeout.
  bool pick_mode = false;
  RunModePicker picker;
  bool picking = false;         // the prepared run's way is the picker's
  bool run_inline_now = false;  // the prepared run's way
  uint64_t kernel_waits_at_launch = 0;
  uint64_t run_timeout_ms = 60000;
  bool skip_device_run = false;
  std::vector<std::unique_ptr<Library>> libraries;
  std::vector<Registered> callables;
  kernels::KernelRegistry builtins;

  enum class Phase { kIdle, kPrepared, kLaunched, kDone } phase = Phase::kIdle;
  ChipTaskArgs device_args;
  std::vector<ChipTensor> device_tensors;  // stable storage the args point into
  std::vector<StagedTensor> staged;
  Status run_error;
  RunReport report;
  DeviceCounters counters_at_prepare;
  uint64_t t_prepare_start = 0, t_launch = 0, t_done = 0;
  int active_callable = -1;
  int rank = -1;  // TASKRING_RANK, carried on chip.run spans
  // TASKRING_PROFILE=1: the per-task device profile, written after each run.
  // The runtime points at it; ~ChipWorker resets the runtime first.
  std::unique_ptr<exec::DeviceProfile> profile;
  // TASKRING_SANITIZE (docs/sanitizer.md): the runtime points at `sanitizer`.
  std::unique_ptr<sanitize::TagChecker> tag_checker;
  sanitize::LaunchSanitizer sanitizer;
  sanitize::SanitizeMode sanitize;
  int base_executors = 1;  // as configured, for the schedule fuzzer's run 0
  bool base_inline = false;
  bool orchestrate_here = false;  // RunConfig::orchestrate_here of the prepared run
  // The ring sizes of a run that overrides none: the PTO2_RING_* knobs, read
  // at the first such run and kept (knobs are read once per worker). Reading
  // them per run was 12 % of a no-op run's instructions, which a node's chip
  // child pays per chip task.
  std::optional<RingSizes> env_rings;
  Expected<RingSizes> ring_sizes(const RingSizes& overrides) {
    if (!sizes_equal(overrides, RingSizes{})) return resolve_ring_sizes(overrides, config.env);
    if (!env_rings) {
      TASKRING_ASSIGN_OR_RETURN(RingSizes s, resolve_ring_sizes(overrides, config.env));
      env_rings = s;
    }
    return *env_rings;
  }
  uint64_t timeout_ms = 0;

  // Staging buffers of finished runs, kept for the next run's arguments of
  // the same size. A fresh device allocation lands on pages the sim arena has
  // returned to the OS (its use-after-free quarantine moves allocations
  // forward), so without this every staged byte page-faults again on every
  // run: that was most of a paged_attention run's host time. Bounded by
  // kStagingCacheBytes; freed by ~ChipWorker.
  static constexpr uint64_t kStagingCacheBytes = uint64_t{256} << 20;
  std::vector<std::pair<DeviceAddr, uint64_t>> staging_cache;  // (address, bytes)
  uint64_t staging_cache_bytes = 0;

  Expected<DeviceAddr> staging_malloc(uint64_t bytes, const std::string& tag) {
    for (size_t i = 0; i < staging_cache.size(); ++i) {
      if (staging_cache[i].second != bytes) continue;
      const DeviceAddr a = staging_cache[i].first;
      staging_cache_bytes -= bytes;
      staging_cache[i] = staging_cache.back();
      staging_cache.pop_back();
      return a;
    }
    return device->malloc(bytes, 1024, tag);
  }

  void free_staging_cache() {
    for (auto& [addr, bytes] : staging_cache) (void)device->free(addr);
    staging_cache.clear();
    staging_cache_bytes = 0;
  }

  void release_staging() {
    for (StagedTensor& s : staged) {
      if (s.dev == 0) continue;
      // Only a live runtime's buffers are reused: an abandoned (wedged) one
      // may still write into them.
      const uint64_t bytes = std::max<uint64_t>(s.bytes, 1);
      if (runtime && staging_cache_bytes + bytes <= kStagingCacheBytes) {
        staging_cache.emplace_back(s.dev, bytes);
        staging_cache_bytes += bytes;
      } else {
        (void)device->free(s.dev);
      }
    }
    staged.clear();
    device_tensors.clear();
    device_args.clear();
  }
};

ChipWorker::ChipWorker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ChipWorker::~ChipWorker() {
  if (impl_->phase == Impl::Phase::kLaunched) (void)wait();
  impl_->release_staging();
  impl_->free_staging_cache();
  impl_->runtime.reset();
}

Expected<std::unique_ptr<ChipWorker>> ChipWorker::create(const ChipWorkerConfig& config) {
  if (config.device != "sim") {
    return invalid_argument("ChipWorker: unknown device '" + config.device + "' (available: sim)");
  }
  if (!is_l2_runtime_name(config.runtime)) {
    return invalid_argument("ChipWorker: unknown runtime '" + config.runtime + "' (available: " + kL2RuntimeNames +
                            ")");
  }
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  TASKRING_ASSIGN_OR_RETURN(SimDeviceConfig dc, SimDeviceConfig::from_env(config.env));
  TASKRING_ASSIGN_OR_RETURN(impl->device, create_sim_device(dc));
  L2RuntimeConfig& rc = impl->runtime_config;
  rc.device = impl->device.get();
  rc.executors = dc.topology.executor_threads;
  TASKRING_ASSIGN_OR_RETURN(ChipKnobs knobs, read_chip_knobs(config.env));
  rc.stall_timeout_ms = knobs.stall_timeout_ms;
  rc.tensor_wait_timeout_ms = knobs.tensor_wait_timeout_ms;
  rc.graph_arena_bytes = knobs.graph_arena_bytes;
  rc.run_inline = knobs.run_inline;
  impl->run_timeout_ms = knobs.run_timeout_ms;
  impl->skip_device_run = knobs.skip_device_run;
  impl->rank = knobs.rank;
  if (knobs.profile) {
    impl->profile = std::make_unique<exec::DeviceProfile>(rc.executors);
    rc.profile = impl->profile.get();
  }
  if (knobs.sanitize.tags) {
    // The checker protects the whole arena around each launch: nothing else
    // of this chip may touch it meanwhile, so the chip runs inline.
    TASKRING_ASSIGN_OR_RETURN(impl->tag_checker, sanitize::TagChecker::create(*impl->device, dc.arena_bytes));
    impl->sanitizer.tags = impl->tag_checker.get();
    rc.run_inline = true;
  }
  impl->sanitize = knobs.sanitize;
  impl->base_executors = rc.executors;
  impl->base_inline = rc.run_inline;
  // The chip picks threaded or inline per run (run_mode.hpp) unless told,
  // on tmr: hbg's recorded Graphs live in its runtime, and a switch would
  // record them again.
  impl->pick_mode = !knobs.run_inline_set && !knobs.sanitize.any() &&
                    (config.runtime == "tmr" || config.runtime == "tensormap_and_ringbuffer");
  if (knobs.sanitize.any()) rc.sanitizer = &impl->sanitizer;
  TASKRING_RETURN_IF_ERROR(kernels::register_builtin_kernels(impl->builtins));
  return std::unique_ptr<ChipWorker>(new ChipWorker(std::move(impl)));
}

Device& ChipWorker::device() { return *impl_->device; }
Topology ChipWorker::topology() const { return impl_->device->topology(); }

Expected<int> ChipWorker::register_callable(const ChipCallable& c) {
  Registered r;
  r.name = c.name.empty() ? "callable#" + std::to_string(impl_->callables.size()) : c.name;
  std::string where = "register_callable('" + r.name + "')";
  if (c.entry != nullptr) {
    r.entry = c.entry;
    r.config = c.config;
    r.bind = &framework_bind_runtime;
  } else if (!c.orchestration_library.empty()) {
    auto entry = load_symbol(c.orchestration_library, c.entry_symbol, &impl_->libraries);
    if (!entry.ok()) return entry.status().with_context(where);
    r.entry = reinterpret_cast<OrchestrationEntry>(*entry);
    auto bind = load_symbol(c.orchestration_library, "framework_bind_runtime", &impl_->libraries);
    if (!bind.ok()) {
      return bind.status().with_context(where + ": the orchestration library must include pto_orchestration_api.h");
    }
    r.bind = reinterpret_cast<BindRuntimeFn>(*bind);
    auto cfg = load_symbol(c.orchestration_library, c.config_symbol, &impl_->libraries);
    if (cfg.ok()) r.config = reinterpret_cast<OrchestrationConfigFn>(*cfg);
  } else {
    return invalid_argument(where + ": neither an entry function nor an orchestration library");
  }
  r.kernels.assign(TASKRING_MAX_FUNC_ID, nullptr);
  for (const KernelBinding& k : c.kernels) {
    if (k.func_id < 0 || k.func_id >= TASKRING_MAX_FUNC_ID) {
      return invalid_argument(where + ": kernel func id " + std::to_string(k.func_id) + " outside [0, " +
                              std::to_string(TASKRING_MAX_FUNC_ID) + ")");
    }
    if (r.kernels[k.func_id] != nullptr) {
      return Status(StatusCode::kAlreadyExists,
                    where + ": kernel func id " + std::to_string(k.func_id) + " registered twice");
    }
    taskring_kernel_fn fn = k.fn;
    if (fn == nullptr && !k.library.empty()) {
      auto sym = load_symbol(k.library, "kernel_entry", &impl_->libraries);
      if (!sym.ok()) return sym.status().with_context(where + ": kernel " + std::to_string(k.func_id));
      fn = reinterpret_cast<taskring_kernel_fn>(*sym);
    }
    if (fn == nullptr) {
      return invalid_argument(where + ": kernel func id " + std::to_string(k.func_id) + " has no function or library");
    }
    r.kernels[k.func_id] = fn;
    if (r.kernel_names.size() <= static_cast<size_t>(k.func_id)) r.kernel_names.resize(k.func_id + 1);
    r.kernel_names[k.func_id] = k.name;
  }
  // The built-in kernels are available to every callable under their
  // stable ids (builtin_ids.hpp) unless the callable binds those ids itself.
  for (int32_t fid = 0; fid < TASKRING_MAX_FUNC_ID; ++fid) {
    if (r.kernels[fid] != nullptr) continue;
    r.kernels[fid] = impl_->builtins.find(fid);
    if (r.kernels[fid] == nullptr) continue;
    if (r.kernel_names.size() <= static_cast<size_t>(fid)) r.kernel_names.resize(fid + 1);
    r.kernel_names[fid] = std::string(impl_->builtins.name(fid));
  }
  impl_->callables.push_back(std::move(r));
  return static_cast<int>(impl_->callables.size() - 1);
}

Status ChipWorker::prepare(int callable_id, const ChipTaskArgs& host_args, const RunConfig& config) {
  Impl& m = *impl_;
  if (m.phase == Impl::Phase::kLaunched) return failed_precondition("prepare: a run is in flight; wait() first");
  if (m.phase == Impl::Phase::kPrepared || m.phase == Impl::Phase::kDone) m.release_staging();
  m.phase = Impl::Phase::kIdle;
  if (callable_id < 0 || callable_id >= static_cast<int>(m.callables.size())) {
    return not_found("prepare: unknown callable id " + std::to_string(callable_id));
  }
  const Registered& c = m.callables[callable_id];
  std::string where = "prepare('" + c.name + "')";
  if (host_args.has_error()) return invalid_argument(where + ": arguments: " + host_args.error_msg());
  m.t_prepare_start = mono_ns();
  m.counters_at_prepare = m.device->counters();
  m.report = RunReport();
  m.report.invocation_id = log::strace::alloc_invocation();
  m.run_error = Status::Ok();
  m.timeout_ms = config.timeout_ms ? config.timeout_ms : m.run_timeout_ms;
  m.orchestrate_here = config.orchestrate_here;

  // Runtime sized for this run (rebuilt only when the sizing changes).
  TASKRING_ASSIGN_OR_RETURN(RingSizes sizes, m.ring_sizes(config.rings));
  // A caller that orchestrates its runs itself (orchestrate_here) gets them threaded: no pick.
  m.picking = m.pick_mode && !m.orchestrate_here;
  m.run_inline_now = m.picking ? m.picker.next_inline(callable_id) : m.runtime_config.run_inline;
  if (!m.runtime || !sizes_equal(sizes, m.runtime_config.rings)) {
    m.runtime.reset();
    L2RuntimeConfig rc = m.runtime_config;
    rc.rings = sizes;
    auto rt = create_l2_runtime(m.config.runtime, rc);
    if (!rt.ok()) return rt.status().with_context(where);
    m.runtime = std::move(rt).value();
    m.runtime_config.rings = sizes;
  }

  // Stage tensors.
  const int nt = host_args.tensor_count();
  m.device_tensors.resize(static_cast<size_t>(nt));
  m.staged.clear();
  for (int i = 0; i < nt; ++i) {
    TensorArgType tag = host_args.tag(i);
    if (tag == TensorArgType::OUTPUT) {
      m.release_staging();
      return invalid_argument(where + ": entry argument " + std::to_string(i) +
                              " is OUTPUT (TensorCreateInfo); pass an existing tensor with add_output(ChipTensor)");
    }
    const ChipTensor& h = *host_args.tensor(i);
    Status v = h.validate();
    if (!v.ok()) {
      m.release_staging();
      return invalid_argument(where + ": entry argument " + std::to_string(i) + ": " + v.message());
    }
    ChipTensor d = h;
    d.owner_task_id = kInvalidTaskId;
    if (h.address_space == AddressSpace::HOST) {
      if (h.buffer.addr == 0 && h.buffer.size > 0) {
        m.release_staging();
        return invalid_argument(where + ": entry argument " + std::to_string(i) + " has a null host buffer");
      }
      uint64_t bytes = std::max<uint64_t>(h.buffer.size, 1);
      auto dev = m.staging_malloc(bytes, "entry arg " + std::to_string(i) + " of " + c.name);
      if (!dev.ok()) {
        m.release_staging();
        return dev.status().with_context(where + ": staging argument " + std::to_string(i));
      }
      StagedTensor s;
      s.dev = *dev;
      s.host = reinterpret_cast<void*>(static_cast<uintptr_t>(h.buffer.addr));
      s.bytes = h.buffer.size;
      s.copy_back = tag == TensorArgType::INOUT || tag == TensorArgType::OUTPUT_EXISTING;
      m.staged.push_back(s);
      bool copy_in = tag == TensorArgType::INPUT || tag == TensorArgType::INOUT || tag == TensorArgType::NO_DEP;
      if (copy_in && h.buffer.size > 0) {
        Status cs = m.device->copy_to_device(s.dev, s.host, s.bytes);
        if (!cs.ok()) {
          m.release_staging();
          return cs.with_context(where + ": H2D of argument " + std::to_string(i));
        }
      }
      d.buffer.addr = s.dev;
      d.address_space = AddressSpace::DEVICE;
    } else if (!m.device->is_device_address(h.buffer.addr)) {
      m.release_staging();
      return invalid_argument(where + ": entry argument " + std::to_string(i) +
                              " says DEVICE but its address is not a device address (" + h.describe() + ")");
    }
    m.device_tensors[static_cast<size_t>(i)] = d;
  }
  m.device_args.clear();
  // The orchestration sees each entry tensor with the tag the caller gave it
  // (it was always INPUT, so an orchestration could not tell what it may write).
  for (int i = 0; i < nt; ++i) m.device_args.add_tensor(m.device_tensors[static_cast<size_t>(i)], host_args.tag(i));
  m.device_args.add_scalars(host_args.scalars(), host_args.scalar_count());
  if (c.config != nullptr) {
    PTO2OrchestrationConfig oc = c.config(m.device_args);
    int have = host_args.tensor_count() + host_args.scalar_count();
    const bool too_many = config.exact_arg_count && oc.expected_arg_count > 0 && have > oc.expected_arg_count;
    if (have < oc.expected_arg_count || too_many) {
      m.release_staging();
      return invalid_argument(where + ": aicpu_orchestration_config expects " + std::to_string(oc.expected_arg_count) +
                              " arguments (tensors + scalars), got " + std::to_string(have));
    }
  }
  m.active_callable = callable_id;
  m.report.bind_ns = mono_ns() - m.t_prepare_start;
  m.phase = Impl::Phase::kPrepared;
  return Status::Ok();
}

Status ChipWorker::launch() {
  Impl& m = *impl_;
  if (m.phase != Impl::Phase::kPrepared) return failed_precondition("launch: no prepared run");
  if (m.profile) m.profile->clear();
  m.t_launch = mono_ns();
  // TASKRING_SKIP_DEVICE_RUN: a runtime with a separate host half (hbg)
  // still orchestrates and uploads, so the host side can be timed; on the
  // others nothing runs.
  const bool host_half = m.skip_device_run && m.runtime->host_phase_only_supported();
  if (m.skip_device_run && !host_half) {
    m.report.skipped_device_run = true;
    m.t_done = m.t_launch;
    m.phase = Impl::Phase::kDone;
    return Status::Ok();
  }
  m.report.skipped_device_run = m.skip_device_run;
  const Registered& c = m.callables[m.active_callable];
  RunRequest request;
  request.entry = c.entry;
  request.bind = c.bind;
  request.args = &m.device_args;
  request.kernels = c.kernels.data();
  if (m.tag_checker) m.tag_checker->set_kernel_names(&c.kernel_names);
  m.sanitizer.kernel_names = &c.kernel_names;
  request.invocation_id = m.report.invocation_id;
  request.host_phase_only = host_half;
  request.tasks_on_orchestrator = m.picking && m.run_inline_now;
  m.kernel_waits_at_launch = exec::kernel_waits();
  request.orchestrate_here = m.orchestrate_here;
  TASKRING_RETURN_IF_ERROR(m.runtime->start_run(request));
  m.phase = Impl::Phase::kLaunched;
  return Status::Ok();
}

Expected<int> ChipWorker::poll() {
  Impl& m = *impl_;
  if (m.phase == Impl::Phase::kDone) return 1;
  if (m.phase != Impl::Phase::kLaunched) return failed_precondition("poll: nothing launched");
  return m.runtime->run_finished() ? 1 : 0;
}

Status ChipWorker::wait() {
  Impl& m = *impl_;
  if (m.phase == Impl::Phase::kDone) return m.run_error;
  if (m.phase != Impl::Phase::kLaunched) return failed_precondition("wait: nothing launched");
  Status w = m.runtime->wait_run(Deadline::after_ms(m.timeout_ms));
  if (!w.ok()) {
    // The run is stuck (a kernel that never returns, or a runtime bug): stop
    // it as fatal and give it the stall budget to drain before giving up.
    m.runtime->report_fatal(PTO2_ERROR_SCHEDULER_TIMEOUT, "run did not finish within " + std::to_string(m.timeout_ms) +
                                                              " ms (TASKRING_RUN_TIMEOUT_MS / RunConfig.timeout_ms)");
    Status drained = m.runtime->wait_run(Deadline::after_ms(m.runtime_config.stall_timeout_ms));
    if (!drained.ok()) {
      // Threads are wedged; drop this runtime so the next run gets a fresh one.
      m.runtime.release();  // leaked on purpose: joining would hang
    }
  }
  m.t_done = mono_ns();
  m.run_error = m.runtime ? m.runtime->run_status()
                          : deadline_exceeded("run did not finish within " + std::to_string(m.timeout_ms) +
                                              " ms (TASKRING_RUN_TIMEOUT_MS / RunConfig.timeout_ms) nor stop within " +
                                              std::to_string(m.runtime_config.stall_timeout_ms) +
                                              " ms after; its runtime was abandoned (a kernel or an orchestration "
                                              "that never returns)");
  if (m.runtime) {
    m.report.stats = m.runtime->stats();
    m.report.graph = m.runtime->graph_stats();
  }
  m.report.ran_inline = m.run_inline_now;
  if (m.picking) {
    m.picker.record(m.active_callable, m.run_inline_now, m.t_done - m.t_launch,
                    m.report.stats.tasks_completed, m.run_error.ok(),
                    exec::kernel_waits() != m.kernel_waits_at_launch);
  }
  m.phase = Impl::Phase::kDone;
  return m.run_error;
}

Expected<RunReport> ChipWorker::finalize() {
  Impl& m = *impl_;
  if (m.phase == Impl::Phase::kLaunched) (void)wait();
  if (m.phase != Impl::Phase::kDone) return failed_precondition("finalize: no finished run");
  uint64_t t0 = mono_ns();
  Status result = m.run_error;
  if (result.ok() && !m.report.skipped_device_run) {
    for (StagedTensor& s : m.staged) {
      if (!s.copy_back || s.bytes == 0) continue;
      Status cs = m.device->copy_from_device(s.host, s.dev, s.bytes);
      if (!cs.ok() && result.ok()) result = cs.with_context("finalize: copy-back");
    }
  }
  m.release_staging();
  m.report.run_ns = m.t_done - m.t_launch;
  uint64_t t1 = mono_ns();
  m.report.validate_ns = t1 - t0;
  RunSpanTimes times;
  times.prepare_start_ns = m.t_prepare_start;
  times.prepare_end_ns = m.t_prepare_start + m.report.bind_ns;
  times.launch_ns = m.t_launch;
  times.done_ns = m.t_done;
  times.validate_start_ns = t0;
  times.validate_end_ns = t1;
  emit_run_spans(m.callables[m.active_callable].name, m.report.invocation_id, times, m.report.stats,
                 !m.report.skipped_device_run, m.rank);
  if (m.profile && !m.report.skipped_device_run) {
    exec::emit_device_profile(m.callables[m.active_callable].name, m.report.invocation_id, *m.profile, m.rank);
  }
  DeviceCounters now = m.device->counters();
  m.report.h2d_calls = now.h2d_calls - m.counters_at_prepare.h2d_calls;
  m.report.h2d_bytes = now.h2d_bytes - m.counters_at_prepare.h2d_bytes;
  m.report.d2h_calls = now.d2h_calls - m.counters_at_prepare.d2h_calls;
  m.report.d2h_bytes = now.d2h_bytes - m.counters_at_prepare.d2h_bytes;
  m.phase = Impl::Phase::kIdle;
  if (!result.ok()) return result.with_context("run of '" + m.callables[m.active_callable].name + "'");
  return m.report;
}

Expected<RunReport> ChipWorker::run(int callable_id, const ChipTaskArgs& host_args, const RunConfig& config) {
  auto once = [&](const RunConfig& rc) -> Expected<RunReport> {
    TASKRING_RETURN_IF_ERROR(prepare(callable_id, host_args, rc));
    TASKRING_RETURN_IF_ERROR(launch());
    (void)wait();
    return finalize();
  };
  Impl& m = *impl_;
  if (m.sanitize.schedule_runs == 0) return once(config);
  sanitize::ScheduleHooks hooks;
  hooks.run_once = [&](const sanitize::ScheduleChoice& c, sanitize::WriteLog* log) {
    // Run 0 as configured (with the tag checker when on); the others on
    // threads, with the seed's executors and rings.
    m.sanitizer.writes = log;
    m.sanitizer.tags = c.run == 0 ? m.tag_checker.get() : nullptr;
    const int executors = c.run == 0 ? m.base_executors : c.executors;
    const bool run_inline = c.run == 0 && m.base_inline;
    if (m.runtime_config.executors != executors || m.runtime_config.run_inline != run_inline) m.runtime.reset();
    m.runtime_config.executors = executors;
    m.runtime_config.run_inline = run_inline;
    RunConfig rc = config;
    if (c.task_window != 0) rc.rings.task_window.fill(c.task_window);
    if (c.heap != 0) rc.rings.heap.fill(c.heap);
    return once(rc);
  };
  hooks.device_addr = [&m](int i) { return m.device_tensors[static_cast<size_t>(i)].buffer.addr; };
  const sanitize::ScheduleOptions opt{m.sanitize.schedule_runs, m.sanitize.seed,
                                      m.config.runtime == "tmr" || m.config.runtime == "tensormap_and_ringbuffer"};
  return sanitize::run_schedules(opt, host_args, *m.device, hooks);
}

}  // namespace taskring
