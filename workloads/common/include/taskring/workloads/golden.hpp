// Golden comparison: a run's output against a host reference.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "taskring/base/status.hpp"

namespace taskring::workloads {

// Element i passes when |got[i] - want[i]| <= atol + rtol·|want[i]|.
// A NaN or infinite output never passes (unless the reference is the same
// infinity).
struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
};

struct GoldenStats {
  uint64_t checked = 0;     // elements compared
  uint64_t mismatches = 0;  // elements outside the tolerance
  double max_abs_err = 0.0;
  double max_rel_err = 0.0;  // |err| / max(|want|, tiny)
  uint64_t worst_index = 0;  // element with the largest excess over its bound
  Tolerance tol;
};

// Compares `got` with `want` element by element and, when `stats` is given,
// fills it. Returns OK when every element passes; otherwise OUT_OF_RANGE with
// "<what>: N of M elements outside tolerance (atol A, rtol R); max abs error
// E, max rel error Q; worst element [i] = got, reference want". A size
// mismatch is INVALID_ARGUMENT.
Status compare_to_reference(std::string_view what, std::span<const float> got, std::span<const double> want,
                            Tolerance tol, GoldenStats* stats = nullptr);

}  // namespace taskring::workloads
