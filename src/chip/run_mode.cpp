#include "run_mode.hpp"

#include <algorithm>

namespace taskring {

RunModePicker::State& RunModePicker::of(int id) {
  if (id >= static_cast<int>(states_.size())) states_.resize(static_cast<size_t>(id) + 1);
  return states_[static_cast<size_t>(id)];
}

bool RunModePicker::next_inline(int id) {
  State& s = of(id);
  if (s.pinned_threaded) return false;
  if (s.runs < kProbeRuns) return s.runs % 2 == 1;
  s.probing_other = (s.runs - kProbeRuns + 1) % kReprobeEvery == 0;
  return s.probing_other ? !s.chose_inline : s.chose_inline;
}

void RunModePicker::record(int id, bool ran_inline, uint64_t run_ns, uint64_t tasks, bool ok, bool waited) {
  State& s = of(id);
  if (waited) s.pinned_threaded = true;
  ++s.runs;
  const bool reprobe = s.probing_other;
  s.probing_other = false;
  if (!ok || tasks == 0) return;
  const int m = ran_inline ? 1 : 0;
  const double ns = static_cast<double>(run_ns) / static_cast<double>(tasks);
  s.last_ns[m] = ns;
  if (s.runs <= kProbeRuns) {
    if (s.runs > kWarmupRuns) s.best_ns[m] = s.best_ns[m] == 0 ? ns : std::min(s.best_ns[m], ns);
    // A way that never completed a timed probe loses; threaded must be
    // clearly faster (kThreadedMargin).
    if (s.runs == kProbeRuns) {
      s.chose_inline = s.best_ns[1] != 0 && (s.best_ns[0] == 0 || s.best_ns[0] >= kThreadedMargin * s.best_ns[1]);
    }
    return;
  }
  if (!reprobe) return;
  const int chosen = s.chose_inline ? 1 : 0;
  if (m != chosen && s.last_ns[chosen] > 0 && ns < kSwitchMargin * s.last_ns[chosen]) s.chose_inline = m == 1;
}

}  // namespace taskring
