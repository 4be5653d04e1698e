#include "run_mode.hpp"

#include <cstddef>

namespace taskring {

RunModePicker::State& RunModePicker::of(int id) {
  if (id >= static_cast<int>(states_.size())) states_.resize(static_cast<std::size_t>(id) + 1);
  return states_[static_cast<std::size_t>(id)];
}

bool RunModePicker::next_inline(int id) {
  State& s = of(id);
  if (s.pinned_threaded) return false;
  if (!s.decided) return s.runs != 0 && s.runs != kProbeRun;
  s.probing_other = (s.runs - s.decided_at + 1) % kReprobeEvery == 0;
  return s.probing_other ? !s.chose_inline : s.chose_inline;
}

bool RunModePicker::needs_time(int id) {
  const State& s = of(id);
  if (s.pinned_threaded) return false;
  if (!s.decided) return s.runs == kProbeRun - 1 || s.runs == kProbeRun;
  const int k = (s.runs - s.decided_at + 1) % kReprobeEvery;
  return k == 0 || k == kReprobeEvery - 1;
}

void RunModePicker::record(int id, bool ran_inline, uint64_t run_ns, uint64_t tasks, bool ok, bool waited) {
  State& s = of(id);
  if (waited) s.pinned_threaded = true;
  const int run = s.runs++;
  const bool reprobe = s.probing_other;
  s.probing_other = false;
  const bool counted = ok && tasks != 0 && run >= 2;  // runs 0 and 1 warm up
  const int m = ran_inline ? 1 : 0;
  const double ns = counted ? static_cast<double>(run_ns) / static_cast<double>(tasks) : 0;
  if (!s.decided) {
    // A failed run forgets its way's earlier figure: the decision compares
    // the probe with the inline run just before it.
    if (run >= 2) s.last_ns[m] = ns;
    if (run == kProbeRun) {
      s.decided = true;
      s.decided_at = s.runs;
      s.chose_inline = s.last_ns[1] != 0 && (s.last_ns[0] == 0 || s.last_ns[0] >= kThreadedMargin * s.last_ns[1]);
    }
    return;
  }
  if (!counted) return;
  const double kept_ns = s.last_ns[s.chose_inline ? 1 : 0];
  s.last_ns[m] = ns;
  if (reprobe && m != (s.chose_inline ? 1 : 0) && kept_ns > 0 && ns < kSwitchMargin * kept_ns) s.chose_inline = m == 1;
}

}  // namespace taskring
