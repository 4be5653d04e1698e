// a5 surface fixture: `set_block_num` is upstream's a5 host_build_graph
// spelling (compiles with --arch a5 on hbg, not on tmr).
#include "orchestration_api.h"

extern "C" void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  CoreTaskArgs args;
  args.add_inout(orch_args.tensor(0).ref());
  args.launch_spec.set_block_num(2);
  rt_submit_aiv_task(0, args);
}
