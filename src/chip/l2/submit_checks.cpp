#include "submit_checks.hpp"

#include <limits>
#include <span>

#include "sync_start.hpp"
#include "taskring/chip/error_codes.hpp"

namespace taskring::l2 {

namespace {

SubmitError fail(int32_t code, const char* op, const std::string& detail) {
  return SubmitError{code, std::string(op) + ": " + detail};
}

std::string arg_name(int i, TensorArgType tag) {
  return "argument " + std::to_string(i) + " (" + std::string(tensor_arg_type_name(tag)) + ")";
}

}  // namespace

Status check_create_info(const TensorCreateInfo& ci) {
  TASKRING_RETURN_IF_ERROR(ci.validate());
  uint64_t bytes = element_size(ci.dtype);
  for (uint32_t i = 0; i < ci.ndims; ++i) {
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(ci.shapes[i]), &bytes)) {
      return invalid_argument("TensorCreateInfo: the byte size of the shape overflows 64 bits");
    }
  }
  if (bytes > kMaxOutputBytes) {
    return invalid_argument("TensorCreateInfo: " + std::to_string(bytes) + " bytes exceed the largest output (2^48)");
  }
  // A dry run of the materialisation the runtime does later, at address 0.
  auto made = try_make_tensor(0, bytes, std::span<const uint32_t>(ci.shapes, ci.ndims), ci.dtype, ci.manual_dep, 0,
                              AddressSpace::DEVICE);
  if (!made.ok()) return invalid_argument("TensorCreateInfo: " + made.status().message());
  return Status::Ok();
}

uint64_t output_heap_bytes(const TensorCreateInfo& ci) {
  uint64_t bytes = ci.nbytes();
  return bytes == 0 ? kHeapAlign : (bytes + kHeapAlign - 1) / kHeapAlign * kHeapAlign;
}

Expected<ChipTensor> make_output_tensor(const TensorCreateInfo& ci, uint64_t addr, PTO2TaskId owner) {
  TASKRING_ASSIGN_OR_RETURN(ChipTensor t,
                            try_make_tensor(addr, ci.nbytes(), std::span<const uint32_t>(ci.shapes, ci.ndims), ci.dtype,
                                            ci.manual_dep, 0, AddressSpace::DEVICE));
  t.owner_task_id = owner;
  return t;
}

namespace {

// Every rule of check_submit, with the message of the first one broken.
SubmitError explain_submit(SubmitKind kind, bool in_scope, const MixedKernels& kernels, const CoreTaskArgs& args,
                           const SubmitPolicy& policy, TaskShape* shape);

}  // namespace

bool check_submit(SubmitKind kind, bool in_scope, const MixedKernels& kernels, const CoreTaskArgs& args,
                  const SubmitPolicy& policy, TaskShape* shape, SubmitError* error) {
  if (plainly_admissible(kind, in_scope, kernels, args, policy, shape)) return true;
  *error = explain_submit(kind, in_scope, kernels, args, policy, shape);
  return error->ok();
}

namespace {

SubmitError explain_submit(SubmitKind kind, bool in_scope, const MixedKernels& kernels, const CoreTaskArgs& args,
                           const SubmitPolicy& policy, TaskShape* shape) {
  const char* op = submit_op_name(kind);
  if (!in_scope) return fail(PTO2_ERROR_INVALID_ARGS, op, "called outside any scope");
  if (args.has_error()) return fail(PTO2_ERROR_INVALID_ARGS, op, args.error_msg());
  const bool with_kernel = kind == SubmitKind::kKernel;
  *shape = with_kernel ? shape_of(kernels) : TaskShape::kDummy;
  if (with_kernel && *shape == TaskShape::kDummy) {
    return fail(PTO2_ERROR_INVALID_ARGS, op, "no active kernel slot (use rt_submit_dummy_task for a kernel-less task)");
  }
  if (with_kernel) {
    for (int32_t id : {kernels.aic_kernel_id, kernels.aiv0_kernel_id, kernels.aiv1_kernel_id}) {
      if (id == INVALID_KERNEL_ID) continue;
      if (id < 0 || id >= TASKRING_MAX_FUNC_ID || policy.kernels[id] == nullptr) {
        return fail(PTO2_ERROR_UNKNOWN_KERNEL, op,
                    "kernel id " + std::to_string(id) + " is not registered with this callable");
      }
    }
  }
  if (args.launch_spec.blocks() < 1) {
    return fail(PTO2_ERROR_INVALID_ARGS, op,
                "launch_spec.block_num " + std::to_string(args.launch_spec.blocks()) + " must be >= 1");
  }
  if (with_kernel) {
    if (std::string why = sync_start_violation(op, *shape, args.launch_spec.blocks(),
                                               args.launch_spec.require_sync_start(), policy.topology);
        !why.empty()) {
      return SubmitError{PTO2_ERROR_REQUIRE_SYNC_START_INVALID, why};
    }
    if (args.predicate().op != PredicateOp::NONE && policy.predicate_why != nullptr) {
      return fail(PTO2_ERROR_INVALID_ARGS, op, std::string("a dispatch predicate ") + policy.predicate_why);
    }
  }
  for (int i = 0; i < args.tensor_count(); ++i) {
    const TensorArgType tag = args.tag(i);
    if (kind == SubmitKind::kAllocOnly && tag != TensorArgType::OUTPUT) {
      return fail(PTO2_ERROR_INVALID_ARGS, op,
                  arg_name(i, tag) + ": alloc_tensors takes only OUTPUT (TensorCreateInfo) arguments");
    }
    if (tag == TensorArgType::OUTPUT) {
      const TensorCreateInfo& ci = *args.create_info(i);
      Status s = check_create_info(ci);
      if (!s.ok()) return fail(PTO2_ERROR_INVALID_ARGS, op, arg_name(i, tag) + ": " + s.message());
      if (ci.has_initial_value && !policy.initial_values_allowed) {
        return fail(PTO2_ERROR_INVALID_ARGS, op,
                    arg_name(i, tag) + " has an initial value; " + policy.initial_value_why);
      }
      continue;
    }
    const ChipTensor& t = *args.tensor(i);
    Status s = t.validate();
    if (!s.ok()) return fail(PTO2_ERROR_INVALID_ARGS, op, arg_name(i, tag) + ": " + s.message());
    const bool virtual_addr = t.buffer.addr >= policy.virtual_base;
    // The address decides, not the tag: an orchestration that re-wraps entry
    // data with make_tensor_external gets upstream's default (HOST) tag.
    if (!virtual_addr && !policy.device->is_device_address(t.buffer.addr)) {
      return fail(PTO2_ERROR_INVALID_ARGS, op,
                  arg_name(i, tag) + " is not a device tensor (" + t.describe() +
                      "); pass tensors from the entry arguments or task outputs");
    }
  }
  return SubmitError{};
}

}  // namespace

}  // namespace taskring::l2
