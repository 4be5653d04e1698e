// Upstream-style orchestration using the view spellings with their
// manual_dep argument (taskring compat suite). Entry: x in FP32[4x4] (iota),
// y inout FP32[4x4] (zeros). y[0:2, 0:2] = x[1:3, 1:3] through kernel 3
// (copy), so y = {5, 6, 0, 0, 9, 10, 0, ...}. A view's manual_dep is its
// last argument (default false), not inherited from its source.
#include <stdint.h>

#include "pto_orchestration_api.h"

#define FUNC_COPY 3

extern "C" {

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
  const ChipTensor &x = orch_args.tensor(0).ref();
  const ChipTensor &y = orch_args.tensor(1).ref();
  uint32_t win[2] = {2, 2};
  uint32_t at11[2] = {1, 1};
  uint32_t at00[2] = {0, 0};
  ChipTensor manual_src = x.view(win, at11, true);
  ChipTensor src = manual_src.view(win, at00);  // back to tracked
  ChipTensor dst = y.view(win, at00, false);
  ChipTensor swapped = dst.transpose(0, 1, true);
  uint32_t flat[1] = {16};
  ChipTensor flat_x = x.reshape(flat, 1, true);
  if (!manual_src.manual_dep || src.manual_dep || dst.manual_dep || !swapped.manual_dep || !flat_x.manual_dep) {
    rt_report_fatal(PTO2_ERROR_EXPLICIT_ORCH_FATAL, "view manual_dep not taken from the argument");
    return;
  }
  CoreTaskArgs args;
  args.add_input(src);
  args.add_output(dst);
  rt_submit_aiv_task(FUNC_COPY, args);
}

}  // extern "C"
