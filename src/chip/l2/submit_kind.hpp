// What an rt_* submission asks for: a kernel task, a kernel-less task that
// only orders others (rt_submit_dummy_task), or an allocation (alloc_tensors).
#pragma once

#include <cstdint>

namespace taskring::l2 {

enum class SubmitKind : uint8_t { kKernel, kDummy, kAllocOnly };

inline const char* submit_op_name(SubmitKind k) {
  return k == SubmitKind::kAllocOnly ? "alloc_tensors"
         : k == SubmitKind::kDummy   ? "rt_submit_dummy_task"
                                     : "rt_submit_task";
}

}  // namespace taskring::l2
