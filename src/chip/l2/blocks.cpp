#include "blocks.hpp"

#include <cstdio>

namespace taskring::l2 {

std::string block_failure_message(const std::string& task, const int32_t kernels[3], int block, int block_num,
                                  const exec::LaunchFailure& f) {
  char where[160];
  std::snprintf(where, sizeof(where), " kernel %d (kernels{aic=%d aiv0=%d aiv1=%d}, block %d/%d, core %d)", f.func_id,
                kernels[0], kernels[1], kernels[2], block, block_num, f.core_id);
  return task + where + " failed with code " + std::to_string(f.code) + ": " + f.message;
}

}  // namespace taskring::l2
