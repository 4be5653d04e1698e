#include "taskring/kernels/builtin.hpp"

#include "taskring/kernels/tile_matmul.hpp"

namespace taskring::kernels {

Status register_builtin_kernels(KernelRegistry& registry) {
  tile::ensure_single_threaded_math();
  struct Entry {
    int32_t id;
    taskring_kernel_fn fn;
    const char* name;
  };
  namespace id = builtin_id;
  static constexpr Entry kEntries[] = {
      {id::kAdd, taskring_builtin_add, "add"},
      {id::kAddScalar, taskring_builtin_add_scalar, "add_scalar"},
      {id::kMul, taskring_builtin_mul, "mul"},
      {id::kCopy, taskring_builtin_copy, "copy"},
      {id::kCast, taskring_builtin_cast, "cast"},
      {id::kMatmul, taskring_builtin_matmul, "matmul"},
      {id::kRmsNorm, taskring_builtin_rmsnorm, "rmsnorm"},
      {id::kSoftmax, taskring_builtin_softmax, "softmax"},
      {id::kRope, taskring_builtin_rope, "rope"},
      {id::kSwiGlu, taskring_builtin_swiglu, "swiglu"},
      {id::kTopkGating, taskring_builtin_topk_gating, "topk_gating"},
      {id::kGatherRows, taskring_builtin_gather_rows, "gather_rows"},
      {id::kScatterAddRows, taskring_builtin_scatter_add_rows, "scatter_add_rows"},
      {id::kPagedAttentionDecode, taskring_builtin_paged_attention_decode, "paged_attention_decode"},
      {id::kMoeRoute, taskring_builtin_moe_route, "moe_route"},
  };
  static_assert(sizeof(kEntries) / sizeof(kEntries[0]) == id::kBuiltinCount);
  for (const Entry& e : kEntries) TASKRING_RETURN_IF_ERROR(registry.register_kernel(e.id, e.fn, e.name));
  return Status::Ok();
}

}  // namespace taskring::kernels
