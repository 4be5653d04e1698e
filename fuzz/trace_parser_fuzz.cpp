// libFuzzer target for the [STRACE] parser: any byte string must parse
// without crashing, and the record accounting must balance.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "taskring/trace/parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  taskring::trace::Trace t = taskring::trace::parse_trace(in, "fuzz");
  const auto& c = t.counts;
  if (c.heads != c.parsed + c.unknown_version + c.torn) std::abort();
  if (t.spans.size() != c.parsed) std::abort();
  for (const auto& s : t.spans) {
    if (s.name_id >= t.names.size() || s.depth < 0) std::abort();
  }
  return 0;
}
