#include "launcher_rank.hpp"

#include <cstdint>
#include <limits>

namespace taskring::net {

Expected<int> read_launcher_rank(const EnvLookup& env, const char** used) {
  if (used != nullptr) *used = "";
  for (const char* v : kLauncherRankVars) {
    auto r = read_int_knob(env, v, 0, std::numeric_limits<int32_t>::max());
    if (!r.ok()) return r.status().with_context("the launcher's rank");
    if (!r->has_value()) continue;
    if (used != nullptr) *used = v;
    return static_cast<int>(**r);
  }
  return 0;
}

}  // namespace taskring::net
