#include "exec/predicate.hpp"

namespace taskring::exec {

Status resolve_predicate(const CoreTaskPredicate& pred, const Device& device, ResolvedPredicate* out) {
  *out = ResolvedPredicate{};
  if (pred.op == PredicateOp::NONE) return Status::Ok();
  if (static_cast<uint8_t>(pred.op) > static_cast<uint8_t>(PredicateOp::LE)) {
    return invalid_argument("predicate: op value " + std::to_string(static_cast<int>(pred.op)) +
                            " is not a PredicateOp");
  }
  const CorePredicateOperand& o = pred.operand;
  if (o.tensor == nullptr) return invalid_argument("predicate: operand.tensor is null");
  const ChipTensor& t = *o.tensor;
  TASKRING_RETURN_IF_ERROR(t.validate());
  if (!device.is_device_address(t.buffer.addr)) {
    return invalid_argument("predicate: operand " + t.describe() + " is not a device tensor");
  }
  if (o.ndims != t.ndims) {
    return invalid_argument("predicate: operand.ndims " + std::to_string(o.ndims) + " differs from the tensor's " +
                            std::to_string(t.ndims));
  }
  for (uint32_t i = 0; i < o.ndims; ++i) {
    if (o.indices[i] >= t.shapes[i]) {
      return invalid_argument("predicate: index " + std::to_string(o.indices[i]) + " of dim " + std::to_string(i) +
                              " outside " + t.describe());
    }
  }
  out->addr = t.buffer.addr + t.element_offset(std::span<const uint32_t>(o.indices, o.ndims)) * t.elem_size();
  out->target = pred.target;
  out->elem_size = static_cast<uint8_t>(t.elem_size());
  out->op = pred.op;
  return Status::Ok();
}

bool predicate_holds(const ResolvedPredicate& pred, const Device& device) {
  return predicate_passes(pred.op, device.device_view_unchecked(pred.addr), pred.elem_size, pred.target);
}

}  // namespace taskring::exec
