// Upstream-style orchestration checking get_tensor_data / set_tensor_data
// widths (taskring compat suite): the element's own size is read or
// written whatever T is. Entry: out INT32[4] (zeros), in FP32[1] (1.0).
// Expected out = {7, 255, 16256, 256}.
#include <stdint.h>

#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const ChipTensor &out = orch_args.tensor(0).ref();
  const ChipTensor &one = orch_args.tensor(1).ref();
  uint32_t i0[1] = {0};
  uint32_t i1[1] = {1};
  uint32_t i2[1] = {2};
  uint32_t i3[1] = {3};

  set_tensor_data(out, 1, i0, (uint64_t)0x100000007ull);  // low 4 bytes: 7
  set_tensor_data(out, 1, i1, (int8_t)-1);                 // zero-extended: 0x000000ff
  uint64_t raw = get_tensor_data(one, 1, i0);              // default T: the FP32 bits
  set_tensor_data<uint32_t>(out, 1, i2, (uint32_t)(raw >> 16));
  uint8_t low = get_tensor_data<uint8_t>(out, 1, i1);      // low byte of 255
  set_tensor_data<int32_t>(out, 1, i3, low + 1);
}

}  // extern "C"
