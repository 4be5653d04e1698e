// The one definition of every environment knob taskring reads: name, alias,
// default, accepted range and help. The components read their knobs through
// it (the bounds come from here), `taskring info` lists and validates every
// entry, and the tables of docs/knobs.md are generated from it
// (`taskring info --knobs-markdown`; base_test fails when the file drifts).
//
// Adding a knob: add its row here, read it with the helpers below, and
// regenerate docs/knobs.md.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "taskring/base/expected.hpp"
#include "taskring/base/knobs.hpp"

namespace taskring {

enum class KnobKind : uint8_t {
  kInt,      // one integer in [min, max]
  kBool,     // 1/0, true/false, yes/no, on/off
  kIntList,  // one value or one per ring, each in [min, max] (PTO2_RING_*)
  kText,     // parsed by its component (log level, link model, directory)
};

struct KnobSpec {
  std::string_view name;
  std::string_view alias;    // an older name also accepted ("" if none); `name` wins
  std::string_view section;  // docs/knobs.md section
  KnobKind kind;
  int64_t min = 0, max = 0;       // kInt, kIntList
  std::string_view default_doc;   // the default, as the docs show it
  std::string_view accepted_doc;  // accepted values; generated for kInt when empty
  std::string_view help;
};

// Every knob, in docs order.
std::span<const KnobSpec> knob_table();

// The row of `name`. Precondition: `name` is a row of knob_table() (a
// programming error otherwise: it aborts naming the knob).
const KnobSpec& knob(std::string_view name);

// kInt: unset → nullopt; otherwise an integer in [spec.min, spec.max] or an
// error naming the variable and the range.
Expected<std::optional<int64_t>> read_int_knob(const EnvLookup& env, const KnobSpec& spec);
// kBool: the name, then the alias; `used_name` says which was set.
Expected<std::optional<bool>> read_bool_knob(const EnvLookup& env, const KnobSpec& spec,
                                             std::string* used_name = nullptr);

// The accepted-values cell of `spec` (accepted_doc, or "integer in [min, max]").
std::string knob_accepted_text(const KnobSpec& spec);

// The knob tables of docs/knobs.md: per section a "## <section>" heading and
// one markdown table row per knob.
std::string knob_table_markdown();

}  // namespace taskring
