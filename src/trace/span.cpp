#include "taskring/trace/span.hpp"

#include <algorithm>

namespace taskring::trace {

std::string_view diagnostic_kind_name(Diagnostic::Kind kind) {
  switch (kind) {
    case Diagnostic::Kind::kTornRecord: return "torn_record";
    case Diagnostic::Kind::kUnknownVersion: return "unknown_version";
    case Diagnostic::Kind::kBadEscape: return "bad_escape";
    case Diagnostic::Kind::kTornAnchor: return "torn_anchor";
    case Diagnostic::Kind::kDuplicateAnchor: return "duplicate_anchor";
    case Diagnostic::Kind::kMissingAnchor: return "missing_anchor";
  }
  return "unknown";
}

const ClockAnchor* Trace::anchor(int64_t pid) const {
  auto it =
      std::lower_bound(anchors.begin(), anchors.end(), pid, [](const ClockAnchor& a, int64_t p) { return a.pid < p; });
  return it != anchors.end() && it->pid == pid ? &*it : nullptr;
}

std::optional<std::string_view> find_attr(std::string_view attrs, std::string_view key) {
  size_t i = 0;
  while (i < attrs.size()) {
    while (i < attrs.size() && attrs[i] == ' ') ++i;
    size_t end = attrs.find(' ', i);
    if (end == std::string_view::npos) end = attrs.size();
    std::string_view tok = attrs.substr(i, end - i);
    if (tok.size() > key.size() && tok.substr(0, key.size()) == key && tok[key.size()] == '=') {
      return tok.substr(key.size() + 1);
    }
    i = end;
  }
  return std::nullopt;
}

}  // namespace taskring::trace
