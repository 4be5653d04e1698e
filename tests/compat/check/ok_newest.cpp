// `taskring orch --check` fixture: compiles (upstream's newest spelling).
#include "orchestration_api.h"

extern "C" void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const simpler::tmr::Tensor &t = orch_args.tensor(0).ref();
  SIMPLER_SCOPE() {
    CoreTaskArgs args;
    args.add_inout(t);
    rt_submit_aiv_task(0, args);
  }
}
