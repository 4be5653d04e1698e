// The argument checks of an rt_* submission, shared by every L2 runtime: the
// API boundary where each user-facing argument is validated once, so the
// runtime behind it can use the arguments without re-checking (every
// TensorCreateInfo accepted here materialises with try_make_tensor).
#pragma once

#include <cstdint>
#include <string>

#include "submit_kind.hpp"
#include "sync_start.hpp"
#include "task_shape.hpp"
#include "taskring/chip/orchestration_api.hpp"
#include "taskring/chip/ring_config.hpp"
#include "taskring/device/device.hpp"
#include "taskring/kernels/kernel_abi.h"

namespace taskring::l2 {

// What a runtime accepts beyond the common rules.
struct SubmitPolicy {
  const taskring_kernel_fn* kernels = nullptr;  // TASKRING_MAX_FUNC_ID entries; nullptr = unregistered
  const Device* device = nullptr;
  Topology topology;  // places for require_sync_start blocks (l2/sync_start.hpp)
  // Non-null when the runtime cannot evaluate dispatch predicates here: the
  // rest of the message ("... <why>").
  const char* predicate_why = nullptr;
  // False when the runtime cannot fill runtime-allocated outputs before the
  // task runs; `initial_value_why` then says why.
  bool initial_values_allowed = true;
  const char* initial_value_why = "";
  // Addresses at or above this are accepted as non-device tensors (a Graph
  // recording's virtual outputs).
  uint64_t virtual_base = UINT64_MAX;
  // device->linear_window(), taken when the policy is built: lets the common
  // case check addresses without a virtual call per tensor.
  LinearWindow window;
};

// A rejected submission: the PTO2 error code and "<op>: <what and where>".
struct SubmitError {
  int32_t code = 0;
  std::string message;
  bool ok() const { return code == 0; }
};

// Checks one submission: `in_scope` (a scope is open), the argument builder's
// own error, the kernel slots (registered ids, block_num >= 1, a
// require_sync_start task that fits the chip: REQUIRE_SYNC_START_INVALID
// otherwise, a predicate the runtime accepts), and every tensor (OUTPUT create infos that can be
// materialised, valid device views, alloc_tensors with OUTPUTs only). Returns
// true and sets `*shape` when the submission is admissible; otherwise fills
// `*error` and returns false. The common case (kernel or dummy tasks over
// existing device tensors) is decided without building any string.
bool check_submit(SubmitKind kind, bool in_scope, const MixedKernels& kernels, const CoreTaskArgs& args,
                  const SubmitPolicy& policy, TaskShape* shape, SubmitError* error);

// The common case of check_submit, decided with no message built: true only
// when every rule holds, so a runtime may take it as the whole check; false
// means "ask check_submit", not "rejected". Anything less usual (OUTPUT create infos,
// alloc_tensors, predicates, a device without a linear window) returns false
// and goes through explain_submit, which accepts it or says why not.
[[gnu::always_inline]] inline bool plainly_admissible(SubmitKind kind, bool in_scope, const MixedKernels& kernels, const CoreTaskArgs& args,
                        const SubmitPolicy& policy, TaskShape* shape) {
  if (!in_scope || args.has_error() || args.launch_spec.blocks() < 1 || policy.window.bytes == 0 ||
      args.predicate().op != PredicateOp::NONE || kind == SubmitKind::kAllocOnly) {
    return false;
  }
  if (kind == SubmitKind::kKernel) {
    *shape = shape_of(kernels);
    if (*shape == TaskShape::kDummy) return false;
    for (int32_t id : {kernels.aic_kernel_id, kernels.aiv0_kernel_id, kernels.aiv1_kernel_id}) {
      if (id == INVALID_KERNEL_ID) continue;
      if (id < 0 || id >= TASKRING_MAX_FUNC_ID || policy.kernels[id] == nullptr) return false;
    }
    if (args.launch_spec.require_sync_start() &&
        args.launch_spec.blocks() > co_resident_capacity(*shape, policy.topology)) {
      return false;
    }
  } else {
    *shape = TaskShape::kDummy;
  }
  for (int i = 0; i < args.tensor_count(); ++i) {
    if (args.tag(i) == TensorArgType::OUTPUT) return false;
    const ChipTensor& t = *args.tensor(i);
    if (tensor_detail::check_descriptor(t) != ViewError::kNone) return false;
    if (!policy.window.contains(t.buffer.addr) && t.buffer.addr < policy.virtual_base) return false;
  }
  return true;
}


// OK iff `ci` describes an OUTPUT that try_make_tensor accepts (rank, dtype,
// shapes whose row-major strides fit 32 bits, at most kMaxOutputBytes).
Status check_create_info(const TensorCreateInfo& ci);

// Largest OUTPUT accepted (2^48 bytes, beyond any heap ring): keeps the sum
// of one task's outputs far from overflowing.
inline constexpr uint64_t kMaxOutputBytes = uint64_t{1} << 48;

// Heap bytes of one OUTPUT: nbytes rounded up to kHeapAlign, at least one
// unit. Precondition: check_create_info(ci) is OK.
uint64_t output_heap_bytes(const TensorCreateInfo& ci);

// The descriptor of OUTPUT `ci` placed at `addr`, owned by `owner`; the
// Status of try_make_tensor otherwise (never for a checked `ci`).
Expected<ChipTensor> make_output_tensor(const TensorCreateInfo& ci, uint64_t addr, PTO2TaskId owner);

}  // namespace taskring::l2
