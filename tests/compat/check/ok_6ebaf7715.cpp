// `taskring orch --check` fixture: compiles (the 6ebaf7715 spelling).
#include "pto_orchestration_api.h"

extern "C" void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const ChipTensor &t = orch_args.tensor(0).ref();
  PTO2_SCOPE() {
    CoreTaskArgs args;
    args.add_inout(t);
    rt_submit_aiv_task(0, args);
  }
}
