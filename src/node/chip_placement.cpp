#include "chip_placement.hpp"

namespace taskring::node {

bool run_chips_inline_by_default(int chips, int cpus) { return chips >= 1 && chips >= cpus; }

bool pin_chips_by_default(int chips, int cpus, bool inline_chips, int sim_threads) {
  if (inline_chips && chips > cpus) return true;
  return chips >= 2 && chips <= cpus && (inline_chips || sim_threads == 1);
}

}  // namespace taskring::node
