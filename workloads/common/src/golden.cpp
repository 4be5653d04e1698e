#include "taskring/workloads/golden.hpp"

#include <cmath>
#include <cstdio>
#include <string>

namespace taskring::workloads {

Status compare_to_reference(std::string_view what, std::span<const float> got, std::span<const double> want,
                            Tolerance tol, GoldenStats* stats) {
  if (got.size() != want.size())
    return invalid_argument(std::string(what) + ": output has " + std::to_string(got.size()) + " elements, reference " +
                            std::to_string(want.size()));
  GoldenStats s;
  s.tol = tol;
  s.checked = got.size();
  double worst_excess = -INFINITY;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    double err = std::fabs(g - w);
    if (std::isnan(err)) err = INFINITY;     // NaN output, or inf - inf
    if (std::isinf(g) && g == w) err = 0.0;  // the same infinity
    const double bound = tol.atol + tol.rtol * std::fabs(w);
    const double rel = err / std::max(std::fabs(w), 1e-30);
    if (err > bound) ++s.mismatches;
    s.max_abs_err = std::max(s.max_abs_err, err);
    s.max_rel_err = std::max(s.max_rel_err, rel);
    if (err - bound > worst_excess) {
      worst_excess = err - bound;
      s.worst_index = i;
    }
  }
  if (stats != nullptr) *stats = s;
  if (s.mismatches == 0) return Status::Ok();
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "%.*s: %llu of %llu elements outside tolerance (atol %g, rtol %g); max abs error %g, max rel error "
                "%g; worst element [%llu] = %.9g, reference %.9g",
                static_cast<int>(what.size()), what.data(), static_cast<unsigned long long>(s.mismatches),
                static_cast<unsigned long long>(s.checked), tol.atol, tol.rtol, s.max_abs_err, s.max_rel_err,
                static_cast<unsigned long long>(s.worst_index), static_cast<double>(got[s.worst_index]),
                want[s.worst_index]);
  return out_of_range(buf);
}

}  // namespace taskring::workloads
