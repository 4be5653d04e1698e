// a5 surface fixture: `set_core_num` is upstream's a5 tensormap_and_ringbuffer
// spelling (compiles with --arch a5 on tmr, not on hbg).
#include "orchestration_api.h"

extern "C" void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  CoreTaskArgs args;
  args.add_inout(orch_args.tensor(0).ref());
  args.launch_spec.set_core_num(2);
  rt_submit_aiv_task(0, args);
}
