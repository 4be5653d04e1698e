// Where span records go: the log fd, or per-process files under a directory.
#pragma once

#include <cstddef>

namespace taskring::log::strace::detail {

// Delivers complete span records: one, or a SpanBatch of at most PIPE_BUF
// bytes. `top_level` (a depth-0 record among them) flushes the file buffer.
// Falls back to the log fd when no directory is set or the file cannot be
// opened/written.
bool deliver_span(const char* record, size_t size, bool top_level);

}  // namespace taskring::log::strace::detail
