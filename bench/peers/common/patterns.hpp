// The four task-graph shapes of the per-task overhead benchmark (issue 4),
// and, for runtimes that take explicit edges (oneTBB flow graph), the edges a
// sequential-consistency dependency tracker infers from their access modes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace peers {

enum class Pattern {
  chain,        // task i: INOUT slot 0                    (serial chain)
  independent,  // task i: OUTPUT slot i                   (no dependencies)
  mix8,         // task i: INPUT slot i%8, INOUT slot (i+1)%8
  fanout,       // task 0: OUTPUT slot 0; tasks 1..N-1: INPUT slot 0
};

inline constexpr std::array<Pattern, 4> kAllPatterns = {Pattern::chain, Pattern::independent, Pattern::mix8,
                                                        Pattern::fanout};

inline constexpr std::string_view name(Pattern p) {
  switch (p) {
    case Pattern::chain: return "chain";
    case Pattern::independent: return "independent";
    case Pattern::mix8: return "mix8";
    case Pattern::fanout: return "fanout";
  }
  return "?";
}

inline std::optional<Pattern> parse_pattern(std::string_view s) {
  for (Pattern p : kAllPatterns)
    if (name(p) == s) return p;
  return std::nullopt;
}

// Predecessor lists in CSR form: preds[offsets[i] .. offsets[i+1]) precede task i.
struct Edges {
  std::vector<uint32_t> offsets;
  std::vector<uint32_t> preds;
  std::size_t count() const { return preds.size(); }
};

// Infers the edges of pattern `p` over `n` tasks the way a runtime with
// access modes would: RAW and WAW on the last writer, WAR on the readers since
// it; duplicates removed. Cost is not part of any timed region.
Edges infer_edges(Pattern p, std::size_t n);

}  // namespace peers
