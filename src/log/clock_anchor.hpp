// The per-process [CLOCK_ANCHOR] record.
#pragma once

#include <cstddef>

namespace taskring::log::detail {

// Longest anchor record, envelope and newline included.
inline constexpr size_t kAnchorRecordMax = 160;

// Renders this process's anchor record (now) into `out`; returns its size.
size_t format_anchor_record(char* out);

// Writes the anchor to `fd` unless this process already has. Called before
// every TIMING record; after the first it costs one load and a compare.
void ensure_clock_anchor(int fd);

}  // namespace taskring::log::detail
