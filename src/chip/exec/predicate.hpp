// Dispatch predicates, shared by the chip runtimes (tmr and hbg): an
// upstream CoreTaskPredicate is resolved at submit to the device address of
// its element, and evaluated when the task is ready to run. A task whose
// predicate is false retires without running its kernels.
#pragma once

#include <cstdint>
#include <string>

#include "taskring/base/status.hpp"
#include "taskring/device/device.hpp"
#include "taskring/tensor/task_args.hpp"

namespace taskring::exec {

struct ResolvedPredicate {
  uint64_t addr = 0;  // device address of the element
  int64_t target = 0;
  uint8_t elem_size = 0;
  PredicateOp op = PredicateOp::NONE;

  bool active() const { return op != PredicateOp::NONE; }
};

// Resolves `pred` (op NONE: an inactive predicate). Errors name what is
// wrong with the operand: no tensor, a malformed or non-device tensor, an
// index rank or index outside the tensor, an op outside PredicateOp.
Status resolve_predicate(const CoreTaskPredicate& pred, const Device& device, ResolvedPredicate* out);

// True when the task should run: an inactive predicate, or one whose
// element (read now) satisfies it.
bool predicate_holds(const ResolvedPredicate& pred, const Device& device);
// Inline so that a task without a predicate (nearly all) pays one compare.
inline bool predicate_allows_run(const ResolvedPredicate& pred, const Device& device) {
  return !pred.active() || predicate_holds(pred, device);
}

}  // namespace taskring::exec
