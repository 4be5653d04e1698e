#include "taskring/kernels/invoke.hpp"

#include <string>

namespace taskring::kernels {

namespace {
StatusCode code_for(int32_t kernel_code) {
  switch (kernel_code) {
    case TASKRING_KERNEL_ERR_INVALID_ARGUMENT: return StatusCode::kInvalidArgument;
    case TASKRING_KERNEL_ERR_OUT_OF_RANGE: return StatusCode::kOutOfRange;
    case TASKRING_KERNEL_ERR_UNSUPPORTED: return StatusCode::kUnimplemented;
    case TASKRING_KERNEL_ERR_DEADLINE: return StatusCode::kDeadlineExceeded;
    default: return StatusCode::kAborted;
  }
}

std::string label(std::string_view name, int32_t func_id) {
  std::string s = "kernel '" + std::string(name) + "'";
  if (func_id >= 0) s += " (func " + std::to_string(func_id) + ")";
  return s;
}
}  // namespace

Status invoke_kernel(taskring_kernel_fn fn, const ChipTensor* tensors, int n, const uint64_t* scalars, int m,
                     KernelLocalContext* local_ctx, std::string_view kernel_name, int32_t func_id,
                     KernelGlobalContext* global_ctx) {
  if (fn == nullptr) return invalid_argument(label(kernel_name, func_id) + ": null entry point");
  if (n < 0 || n > TASKRING_KERNEL_MAX_TENSORS)
    return invalid_argument(label(kernel_name, func_id) + ": " + std::to_string(n) + " tensors, at most " +
                            std::to_string(TASKRING_KERNEL_MAX_TENSORS));
  if (m < 0 || m > TASKRING_KERNEL_MAX_SCALARS)
    return invalid_argument(label(kernel_name, func_id) + ": " + std::to_string(m) + " scalars, at most " +
                            std::to_string(TASKRING_KERNEL_MAX_SCALARS));
  KernelLocalContext own{};
  KernelGlobalContext own_global{};
  if (local_ctx == nullptr) {
    own.block_num = 1;
    own.core_type = TASKRING_CORE_AIV;
    local_ctx = &own;
  }
  if (global_ctx == nullptr) {
    own_global.cluster_count = 1;
    own_global.aiv_count = 2;
    global_ctx = &own_global;
  }
  local_ctx->tensor_count = n;
  local_ctx->scalar_count = m;
  local_ctx->func_id = func_id;
  local_ctx->error_code = 0;
  local_ctx->error_message[0] = '\0';

  int64_t args[TASKRING_KERNEL_ARG_SLOTS] = {};
  pack_kernel_args(args, tensors, n, scalars, m, local_ctx, global_ctx);
  fn(args);

  if (local_ctx->error_code == 0) return Status::Ok();
  local_ctx->error_message[TASKRING_KERNEL_ERROR_CAPACITY - 1] = '\0';
  return Status(code_for(local_ctx->error_code), label(kernel_name, func_id) + " failed (code " +
                                                     std::to_string(local_ctx->error_code) +
                                                     "): " + local_ctx->error_message);
}

Status invoke_kernel(const KernelRegistry& registry, int32_t func_id, const ChipTensor* tensors, int n,
                     const uint64_t* scalars, int m, KernelLocalContext* local_ctx) {
  TASKRING_ASSIGN_OR_RETURN(taskring_kernel_fn fn, registry.lookup(func_id));
  return invoke_kernel(fn, tensors, n, scalars, m, local_ctx, registry.name(func_id), func_id);
}

}  // namespace taskring::kernels
