// Upstream-style orchestration that picks the SPMD block-count setter of
// whichever architecture it is compiled for by SFINAE (taskring compat
// suite). Built twice: with TASKRING_ORCH_ARCH_A2A3 (set_block_num) and
// with TASKRING_ORCH_ARCH_A5 (set_core_num); with both spellings present
// the two overloads below would be ambiguous. Entry: a, b in FP32[N]; out
// FP32[N]; out = a + b in 3 blocks.
#include <stdint.h>

#include "pto_orchestration_api.h"

#define FUNC_ADD 0

template <typename Spec>
static inline auto set_blocks_for_arch(Spec &s, int16_t n) -> decltype(s.set_block_num(n), void()) {
  s.set_block_num(n);
}
template <typename Spec>
static inline auto set_blocks_for_arch(Spec &s, int16_t n) -> decltype(s.set_core_num(n), void()) {
  s.set_core_num(n);
}

extern "C" {

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const ChipTensor &a = orch_args.tensor(0).ref();
  const ChipTensor &b = orch_args.tensor(1).ref();
  const ChipTensor &out = orch_args.tensor(2).ref();
  CoreTaskArgs args;
  args.add_input(a, b);
  args.add_output(out);
  set_blocks_for_arch(args.launch_spec, 3);
  rt_submit_aiv_task(FUNC_ADD, args);
}

}  // extern "C"
