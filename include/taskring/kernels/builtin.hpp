// The built-in kernels and their registration.
//
// Each kernel is a plain `void(int64_t*)` entry point following
// kernel_abi.h; docs/kernels.md documents every argument list. They validate
// ranks, shapes, dtypes, counts and indices and report failures through
// taskring_kernel_fail (message "<kernel>: <reason>"); with a null local
// context they cannot report and return without touching memory.
#pragma once

#include <cstdint>
#include <string_view>

#include "taskring/base/status.hpp"
#include "taskring/kernels/builtin_ids.hpp"
#include "taskring/kernels/registry.hpp"

namespace taskring::kernels {

extern "C" {
void taskring_builtin_add(int64_t* args);
void taskring_builtin_add_scalar(int64_t* args);
void taskring_builtin_mul(int64_t* args);
void taskring_builtin_copy(int64_t* args);
void taskring_builtin_cast(int64_t* args);
void taskring_builtin_matmul(int64_t* args);
void taskring_builtin_rmsnorm(int64_t* args);
void taskring_builtin_softmax(int64_t* args);
void taskring_builtin_rope(int64_t* args);
void taskring_builtin_swiglu(int64_t* args);
void taskring_builtin_topk_gating(int64_t* args);
void taskring_builtin_gather_rows(int64_t* args);
void taskring_builtin_scatter_add_rows(int64_t* args);
void taskring_builtin_paged_attention_decode(int64_t* args);
void taskring_builtin_moe_route(int64_t* args);
}

// Registers all built-in kernels under their builtin_id values, names as in
// docs/kernels.md ("add", "matmul", ...). Errors: ALREADY_EXISTS when one of
// those ids is taken (kernels registered before the collision stay).
Status register_builtin_kernels(KernelRegistry& registry);

}  // namespace taskring::kernels
