// How an orchestration (code running as the chip's control processor) sees
// device memory on sim, shared by the chip runtimes: the ops-table entries
// behind ChipTensor::data_as and make_tensor_external in an orchestration.
#pragma once

#include <cstdint>

#include "taskring/device/device.hpp"

namespace taskring::exec {

// A pointer the orchestration can dereference for device address `addr`;
// `addr` itself (as a pointer) when it is not a device address.
void* orchestration_host_view(const Device& device, uint64_t addr);

// The device address host pointer `p` stands for when it points into the
// device's memory (a pointer from orchestration_host_view); 0 otherwise.
uint64_t orchestration_device_address(const Device& device, const void* p);

}  // namespace taskring::exec
