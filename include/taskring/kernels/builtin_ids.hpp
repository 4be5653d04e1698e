// Func ids of the built-in kernels: the one place they are listed.
//
// The ids are stable (part of the orchestration ABI) and live in the top of
// the id space, kBuiltinBase .. TASKRING_MAX_FUNC_ID-1, so user kernels can
// keep the small ids upstream code uses. docs/kernels.md gives each kernel's
// tensors and scalars.
#pragma once

#include <cstdint>

#include "taskring/kernels/kernel_abi.h"

namespace taskring::kernels::builtin_id {

inline constexpr int32_t kBuiltinBase = TASKRING_MAX_FUNC_ID - 128;  // 896

inline constexpr int32_t kAdd = kBuiltinBase + 0;
inline constexpr int32_t kAddScalar = kBuiltinBase + 1;
inline constexpr int32_t kMul = kBuiltinBase + 2;
inline constexpr int32_t kCopy = kBuiltinBase + 3;
inline constexpr int32_t kCast = kBuiltinBase + 4;
inline constexpr int32_t kMatmul = kBuiltinBase + 5;
inline constexpr int32_t kRmsNorm = kBuiltinBase + 6;
inline constexpr int32_t kSoftmax = kBuiltinBase + 7;
inline constexpr int32_t kRope = kBuiltinBase + 8;
inline constexpr int32_t kSwiGlu = kBuiltinBase + 9;
inline constexpr int32_t kTopkGating = kBuiltinBase + 10;
inline constexpr int32_t kGatherRows = kBuiltinBase + 11;
inline constexpr int32_t kScatterAddRows = kBuiltinBase + 12;
inline constexpr int32_t kPagedAttentionDecode = kBuiltinBase + 13;
inline constexpr int32_t kMoeRoute = kBuiltinBase + 14;

inline constexpr int32_t kBuiltinCount = 15;

}  // namespace taskring::kernels::builtin_id
