// get_tensor_data / set_tensor_data: the checks and the element address both
// runtimes share. What differs is ordering: tmr waits for the tasks that
// touch the element, hbg (built before anything runs) refuses elements a task
// of the run produces or touches.
#pragma once

#include <cstdint>

#include "taskring/base/expected.hpp"
#include "taskring/device/device.hpp"
#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::l2 {

struct ElementRef {
  ChipTensor view;  // `t` narrowed to the one element (a 1-element view)
  DeviceAddr addr;  // the element's device address
};

// Validates one element access on device tensor `t`: a valid view on device
// memory, `ndims` equal to its rank, every index inside its shape, `bytes`
// equal to its element size. The error names the mismatch.
Expected<ElementRef> locate_element(const Device& device, const ChipTensor& t, uint32_t ndims, const uint32_t* idx,
                                    uint32_t bytes);

}  // namespace taskring::l2
