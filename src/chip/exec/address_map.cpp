#include "exec/address_map.hpp"

#include "taskring/device/sim_device.hpp"

namespace taskring::exec {

void* orchestration_host_view(const Device& device, uint64_t addr) {
  if (!device.is_device_address(addr)) return reinterpret_cast<void*>(static_cast<uintptr_t>(addr));
  return device.device_view_unchecked(addr);
}

uint64_t orchestration_device_address(const Device& device, const void* p) {
  // The sim device backs its whole address range, from kSimDeviceAddressBase
  // up, with one host block; a pointer into that block maps back by offset.
  const auto* base = static_cast<const char*>(device.device_view_unchecked(kSimDeviceAddressBase));
  const auto* q = static_cast<const char*>(p);
  if (base == nullptr || q < base) return 0;
  const uint64_t addr = kSimDeviceAddressBase + static_cast<uint64_t>(q - base);
  return device.is_device_address(addr) ? addr : 0;
}

}  // namespace taskring::exec
