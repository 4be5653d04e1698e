// Percent-decoding of STRACE names and attrs (`%XX`, uppercase or lowercase hex).
#pragma once

#include <string>
#include <string_view>

namespace taskring::trace {

// Appends the decoded form of `in` to `out`. A `%` that is not followed by two
// hex digits is kept literally (so a truncation marker such as `%0~` stays
// visible) and counted. Returns the number of such malformed escapes.
size_t percent_decode(std::string_view in, std::string& out);

}  // namespace taskring::trace
