// The dependency rules, stated once for every tracker and every level
// (TensorMap for tmr, L3 and L4; BuildTracker for hbg and Graph recording).
//
// Accesses are kept per buffer (base address), writers (INOUT,
// OUTPUT_EXISTING; at L3/L4 also OUTPUT) apart from readers (INPUT):
//   - a reader probe depends on every overlapping writer (RAW);
//   - a writer probe depends on every overlapping writer (WAW) and reader
//     (WAR; upstream leaves WAR to the user, taskring tracks it);
//   - a writer probe whose region covers an entry replaces it: later probes
//     that would have reached the entry reach the writer, which depends on it.
// Overlap is compute_overlap (overlap.hpp): exact on one row-major lattice,
// conservative otherwise, so a real dependency is never dropped. Which tags
// a level tracks at all (NO_DEP, manual_dep, device tensors) is the level's
// choice; what happens to a tracked access is decided here.
#pragma once

#include "deps/overlap.hpp"

namespace taskring::deps {

// What a probe does with one entry it meets.
struct Verdict {
  bool depends;   // the probing task waits for the entry's task
  bool replaces;  // the entry may be dropped: the probing writer stands for it
};

// The verdict for `entry` (a writer, or a reader met by a writer probe).
template <typename Entry>  // ChipTensor or Footprint
inline Verdict judge(const ChipTensor& probe, bool probe_is_writer, const Entry& entry) {
  const Overlap o = compute_overlap(probe, entry);
  return Verdict{o != Overlap::kNone, probe_is_writer && o == Overlap::kCovered};
}

// Whether a probe meets the reader entries of its buffer at all.
constexpr bool meets_readers(bool probe_is_writer) { return probe_is_writer; }

}  // namespace taskring::deps
