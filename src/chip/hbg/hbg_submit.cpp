// hbg host half: ordinary submits, scopes and tensor access.
#include <algorithm>

#include "l2/element_access.hpp"
#include "l2/submit_checks.hpp"
#include "hbg_runtime.hpp"
#include "sanitize/arg_tag.hpp"

namespace taskring::hbg {

namespace {

bool writes(TensorArgType tag) { return tag == TensorArgType::INOUT || tag == TensorArgType::OUTPUT_EXISTING; }

}  // namespace

void HbgRuntime::fail_args(const char* what, const std::string& detail) {
  report_fatal(PTO2_ERROR_INVALID_ARGS, std::string(what) + ": " + detail);
}

bool HbgRuntime::new_task(const char* op, HostTask** out) {
  if (build_.tasks.size() >= task_limit_) {
    report_fatal(PTO2_ERROR_SCOPE_TASKS_OVERFLOW,
                 std::string(op) + ": the run submits more than " + std::to_string(task_limit_) +
                     " tasks; hbg keeps every task of a run in its window (sum of PTO2_RING_TASK_WINDOW over the "
                     "rings); raise PTO2_RING_TASK_WINDOW");
    return false;
  }
  build_.tasks.push_back(HostTask{});
  fanin_stamp_.push_back(0);
  HostTask* t = &build_.tasks.back();
  t->kernels[0] = t->kernels[1] = t->kernels[2] = INVALID_KERNEL_ID;
  t->block_num = 1;
  t->shape = static_cast<uint8_t>(l2::TaskShape::kDummy);
  t->kind = TaskKind::kTask;
  t->tensor_first = static_cast<uint32_t>(build_.tensors.size());
  t->scalar_first = static_cast<uint32_t>(build_.scalars.size());
  t->fanin_first = static_cast<uint32_t>(build_.fanin.size());
  cur_task_ = static_cast<uint32_t>(build_.tasks.size() - 1);
  *out = t;
  return true;
}

bool HbgRuntime::heap_alloc(uint64_t bytes, const char* what, uint64_t* addr) {
  if (heap_top_ + bytes > heap_size_) {
    report_fatal(PTO2_ERROR_HEAP_RING_DEADLOCK, std::string(what) + ": heap exhausted (" + std::to_string(heap_top_) +
                                                    " of " + std::to_string(heap_size_) + " bytes used, request " +
                                                    std::to_string(bytes) +
                                                    "); hbg never reclaims heap within a run; raise PTO2_RING_HEAP");
    return false;
  }
  *addr = heap_base_ + heap_top_;
  heap_top_ += bytes;
  stats_.heap_bytes += bytes;
  return true;
}

void HbgRuntime::add_fanin(uint32_t producer) {
  if (producer >= cur_task_ || fanin_stamp_[producer] == cur_task_ + 1) return;
  fanin_stamp_[producer] = cur_task_ + 1;
  build_.fanin.push_back(producer);
}

void HbgRuntime::collect_deps(const ChipTensor& t, TensorArgType tag) {
  if (t.owner_task_id.is_valid() && t.owner_task_id.ring() == 0) add_fanin(t.owner_task_id.local());
  if (t.manual_dep || tag == TensorArgType::NO_DEP) return;
  map_.for_each_dependency(t, writes(tag), [&](int32_t p) { add_fanin(static_cast<uint32_t>(p)); });
}

void HbgRuntime::register_access(const ChipTensor& t, TensorArgType tag, int32_t task) {
  if (tag == TensorArgType::OUTPUT || tag == TensorArgType::NO_DEP || t.manual_dep) return;
  map_.insert(t, task, tag != TensorArgType::INPUT);
}

TaskOutputTensors HbgRuntime::submit(const MixedKernels& kernels, const CoreTaskArgs& args, l2::SubmitKind kind) {
  TaskOutputTensors result;
  if (is_fatal()) return result;
  const char* op = l2::submit_op_name(kind);
  const bool dummy = kind != l2::SubmitKind::kKernel;
  const bool alloc_only = kind == l2::SubmitKind::kAllocOnly;
  // After an unrecordable construct the rest of the body is ignored so the
  // run reports that construct, not its consequences.
  if (recording_ != nullptr && recording_->failed()) return result;
  l2::SubmitPolicy policy;
  policy.kernels = request_.kernels;
  policy.device = config_.device;
  // A recording checks initial values itself (it names the Graph node).
  policy.initial_values_allowed = recording_ != nullptr;
  policy.initial_value_why =
      "hbg builds the run before it executes and cannot fill runtime-allocated outputs (write them with a task "
      "instead)";
  policy.topology = topo_;
  if (recording_ != nullptr) {
    policy.virtual_base = graph::kRecordVirtualBase;
    policy.predicate_why = "inside a Graph body is not supported on hbg";
  }
  policy.window = config_.device->linear_window();
  l2::TaskShape tshape = l2::TaskShape::kDummy;
  l2::SubmitError bad;
  if (!l2::check_submit(kind, !scopes_.empty(), kernels, args, policy, &tshape, &bad)) {
    report_fatal(bad.code, bad.message);
    return result;
  }
  const uint8_t shape = static_cast<uint8_t>(tshape);
  if (recording_ != nullptr) return recording_->record(op, kernels, shape, dummy, args);

  exec::ResolvedPredicate predicate;
  if (Status ps = exec::resolve_predicate(args.predicate(), *config_.device, &predicate); !ps.ok()) {
    fail_args(op, ps.message());
    return result;
  }
  HostTask* t = nullptr;
  if (!new_task(op, &t)) return result;
  const uint32_t idx = cur_task_;
  const bool manual = scopes_.back() != 0;
  const int nt = args.tensor_count();
  for (int i = 0; i < args.dependency_count(); ++i) {
    PTO2TaskId id = args.dependency_ids()[i];
    uint8_t flags = args.dependency_flags() ? args.dependency_flags()[i] : (DEP_WAIT | DEP_RETAIN);
    if ((flags & DEP_WAIT) && id.is_valid() && id.ring() == 0) add_fanin(id.local());
  }
  uint64_t heap_bytes = 0;
  for (int i = 0; i < nt; ++i) {
    TensorArgType tag = args.tag(i);
    if (tag == TensorArgType::OUTPUT) {
      heap_bytes += l2::output_heap_bytes(*args.create_info(i));
    } else if (!manual) {
      collect_deps(*args.tensor(i), tag);
    }
  }
  uint64_t out_addr = 0;
  if (heap_bytes > 0 && !heap_alloc(heap_bytes, op, &out_addr)) return result;
  if (build_.fanin.size() > dep_limit_) {
    report_fatal(PTO2_ERROR_DEP_POOL_OVERFLOW,
                 std::string(op) + ": the run's dependency edges exceed " + std::to_string(dep_limit_) +
                     " (sum of PTO2_RING_DEP_POOL over the rings); raise PTO2_RING_DEP_POOL");
    return result;
  }
  t->kernels[0] = kernels.aic_kernel_id;
  t->kernels[1] = kernels.aiv0_kernel_id;
  t->kernels[2] = kernels.aiv1_kernel_id;
  t->shape = shape;
  t->block_num = dummy ? 1 : args.launch_spec.blocks();
  t->sync_start = !dummy && args.launch_spec.require_sync_start();
  t->predicate = predicate;
  t->tensor_count = static_cast<uint32_t>(nt);
  t->scalar_count = static_cast<uint32_t>(args.scalar_count());
  t->fanin_count = static_cast<uint32_t>(build_.fanin.size()) - t->fanin_first;
  const PTO2TaskId id = PTO2TaskId::make(0, idx);
  for (int i = 0; i < nt; ++i) {
    if (args.tag(i) != TensorArgType::OUTPUT) {
      build_.tensors.push_back(*args.tensor(i));
      sanitize::stamp_tag(build_.tensors.back(), args.tag(i));
      continue;
    }
    const TensorCreateInfo& ci = *args.create_info(i);
    auto made = l2::make_output_tensor(ci, out_addr, id);
    if (!made.ok()) {
      // check_submit accepted `ci`: a runtime bug, reported; nothing runs.
      fail_args(op, "argument " + std::to_string(i) + " (OUTPUT): " + made.status().message());
      build_.tensors.push_back(ChipTensor{});
    } else {
      build_.tensors.push_back(*made);
    }
    sanitize::stamp_tag(build_.tensors.back(), TensorArgType::OUTPUT);
    out_addr += l2::output_heap_bytes(ci);
    if (result.count < CORE_MAX_TENSOR_ARGS) result.outputs[result.count++] = &build_.tensors.back();
  }
  if (!manual) {
    for (int i = 0; i < nt; ++i) {
      register_access(build_.tensors[t->tensor_first + static_cast<uint32_t>(i)], args.tag(i),
                      static_cast<int32_t>(idx));
    }
  }
  build_.scalars.insert(build_.scalars.end(), args.scalars(), args.scalars() + args.scalar_count());
  if (alloc_only)
    ++stats_.alloc_tasks;
  else if (dummy)
    ++stats_.dummy_tasks;
  else
    ++stats_.kernel_tasks;
  result.set_task_id(id);
  return result;
}

// ---------------------------------------------------------------- scopes

void HbgRuntime::scope_begin(PTO2ScopeMode mode) {
  if (recording_ != nullptr) {
    recording_->scope_begin(mode);
    return;
  }
  if (scopes_.size() >= static_cast<size_t>(PTO2_MAX_SCOPE_DEPTH)) {
    report_fatal(PTO2_ERROR_INVALID_ARGS, "scope_begin: more than " + std::to_string(PTO2_MAX_SCOPE_DEPTH) +
                                              " nested scopes (PTO2_MAX_SCOPE_DEPTH)");
  }
  bool in_manual = !scopes_.empty() && scopes_.back() != 0;
  if (mode == PTO2ScopeMode::AUTO && in_manual) {
    report_fatal(PTO2_ERROR_INVALID_ARGS, "scope_begin: an AUTO scope inside a MANUAL scope is not allowed");
  }
  scopes_.push_back(in_manual || mode == PTO2ScopeMode::MANUAL ? 1 : 0);
}

void HbgRuntime::scope_end() {
  if (recording_ != nullptr) {
    recording_->scope_end();
    return;
  }
  if (scopes_.size() <= 1) {
    report_fatal(PTO2_ERROR_INVALID_ARGS, "scope_end: no open scope");
    return;
  }
  scopes_.pop_back();
}

// ---------------------------------------------------------------- tensor data

bool HbgRuntime::tensor_access(const ChipTensor& t, uint32_t ndims, const uint32_t* idx, void* data, uint32_t bytes,
                               bool write) {
  const char* op = write ? "set_tensor_data" : "get_tensor_data";
  if (is_fatal()) return false;
  if (recording_ != nullptr) {
    recording_->fail(std::string(op) + " cannot be recorded (a replay has no host step)");
    return false;
  }
  auto found = l2::locate_element(*config_.device, t, ndims, idx, bytes);
  if (!found.ok()) {
    fail_args(op, found.status().message());
    return false;
  }
  const ChipTensor& elem = found->view;
  bool produced = t.owner_task_id.is_valid() && t.owner_task_id.ring() == 0;
  // A read must follow every writer of this run; a write also every reader.
  bool touched = !produced && map_.has_entry(elem, write);
  if (produced || touched) {
    fail_args(op, std::string("hbg builds the whole run before any task executes, so ") +
                      (write ? "a write ordered after tasks of this run" : "a value produced by a task of this run") +
                      " is not available (" + t.describe() +
                      "); use the tmr runtime, or restructure so the host reads only entry inputs");
    return false;
  }
  DeviceAddr a = found->addr;
  Status c = write ? config_.device->copy_to_device(a, data, bytes) : config_.device->copy_from_device(data, a, bytes);
  if (!c.ok()) {
    fail_args(op, c.message());
    return false;
  }
  return true;
}

}  // namespace taskring::hbg
