#include "element_access.hpp"

#include <span>

namespace taskring::l2 {

Expected<ElementRef> locate_element(const Device& device, const ChipTensor& t, uint32_t ndims, const uint32_t* idx,
                                    uint32_t bytes) {
  TASKRING_RETURN_IF_ERROR(t.validate());
  // The address decides, not the tag (make_tensor_external's default is HOST).
  if (!device.is_device_address(t.buffer.addr)) {
    return invalid_argument("not a device tensor (" + t.describe() + ")");
  }
  if (idx == nullptr) return invalid_argument("null index array");
  if (ndims != t.ndims || bytes != t.elem_size()) {
    return invalid_argument("index rank " + std::to_string(ndims) + " or element size " + std::to_string(bytes) +
                            " does not match " + t.describe());
  }
  for (uint32_t i = 0; i < ndims; ++i) {
    if (idx[i] >= t.shapes[i]) {
      return invalid_argument("index " + std::to_string(idx[i]) + " of dim " + std::to_string(i) + " outside " +
                              t.describe());
    }
  }
  ElementRef e{t, 0};
  uint64_t off = t.element_offset(std::span<const uint32_t>(idx, ndims));
  e.view.start_offset = off;
  for (uint32_t i = 0; i < ndims; ++i) e.view.shapes[i] = 1;
  e.view.refresh_derived();
  e.addr = t.buffer.addr + off * t.elem_size();
  return e;
}

}  // namespace taskring::l2
