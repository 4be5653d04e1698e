// ParamSet: the named integer parameters of a workload.
//
// A workload declares its parameters (name, default, accepted range, help)
// when it is constructed; front ends set them from flags (`--<name> <value>`)
// before Workload::setup(). Every parameter is an int64 so that one binding
// loop serves the CLI, the multi-rank harness and tests alike.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

#include "taskring/base/status.hpp"

namespace taskring::workloads {

struct Param {
  std::string name;  // flag name without the leading "--", e.g. "grid_k"
  int64_t value = 0;
  int64_t min = 0, max = 0;  // accepted range, inclusive
  std::string help;
};

class ParamSet {
 public:
  // Declares a parameter with its default. Precondition: `name` is new and
  // min <= value <= max.
  ParamSet& add(std::string name, int64_t value, int64_t min, int64_t max, std::string help);

  // The value of a declared parameter. Precondition: declared (asserts).
  int64_t get(std::string_view name) const;

  // Sets a declared parameter. Errors: NOT_FOUND naming the parameter and the
  // known names; OUT_OF_RANGE naming the value and the accepted range.
  Status set(std::string_view name, int64_t value);
  // Same, from text ("--grid_k 4" style front ends). INVALID_ARGUMENT when
  // `text` is not a base-10 integer.
  Status set_from_string(std::string_view name, std::string_view text);

  // The parameters in declaration order. Addresses are stable for the life of
  // the set, so a front end may bind flag storage to `Param::value` directly
  // (it must then respect [min, max] itself, or call set()).
  std::deque<Param>& entries() { return params_; }
  const std::deque<Param>& entries() const { return params_; }

  // "name=value name=value ..." in declaration order.
  std::string describe() const;

 private:
  const Param* find(std::string_view name) const;
  std::deque<Param> params_;
};

}  // namespace taskring::workloads
