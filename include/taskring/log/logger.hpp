// The taskring logger: one fully formatted record, one write(2).
//
// Every record has the envelope
//   [mono_ns=<CLOCK_MONOTONIC ns>][T0x<pthread_self hex>][<LEVEL>] <func>: <message>\n
// and is rendered completely into one buffer (2 KiB on the stack, the heap
// for longer ones) before it is written with a single write(2), looping only
// on EINTR and short writes. Records up to PIPE_BUF bytes are therefore
// indivisible on a pipe or an O_APPEND file shared by forked processes, which
// is what multi-rank timing capture relies on (docs/logging.md).
// Longer records are serialised among the threads of one process only.
//
// Before the first TIMING record of each process (forked children included)
// the logger writes one
//   [CLOCK_ANCHOR] v=1 pid=<pid> mono_ns=<ns> wall_ns=<ns>
// record (func "clock_anchor", level TIMING) that maps mono_ns to wall time.
//
// All functions are thread-safe and async-signal-unsafe.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "taskring/base/status.hpp"
#include "taskring/log/level.hpp"

namespace taskring::log {

namespace detail {
// The threshold as an int, read with one relaxed load per gated record. It is
// process-global because the logger is: every layer and every thread filters
// against the one value the process was initialised with.
inline std::atomic<int> g_threshold{static_cast<int>(Level::kTiming)};
}  // namespace detail

// True when a record at `level` would be emitted. Costs one relaxed load.
inline bool enabled(Level level) {
  return static_cast<int>(level) >= detail::g_threshold.load(std::memory_order_relaxed) && level != Level::kNul;
}

// Sets / returns the threshold (default Level::kTiming).
void set_threshold(Level level);
Level threshold();

// Sets the descriptor records go to (default 2, stderr) and returns the
// previous one. The logger never closes it. For tests and benchmarks.
int set_output_fd(int fd);
int output_fd();

// Formats and emits one record at `level` from function `func` (printf-style
// `fmt`). A newline is appended unless the message already ends with one.
// Returns false when the record was filtered out or could not be written.
bool logf(Level level, const char* func, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

// As logf, with "[<file>:<line>] " prepended to the message; what the
// TR_LOG_* macros call.
bool logf_at(Level level, const char* func, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));

// Emits `record`, which the caller formatted completely (envelope and final
// newline included), with one write(2) to the output fd; writes the clock
// anchor first when `level` is TIMING. Used by the STRACE emitter.
bool write_record(Level level, const char* record, size_t size);

// Renders the envelope prefix "[mono_ns=..][T0x..][LEVEL] func: " into
// `out`, which must hold at least kEnvelopeFixedMax + func.size() bytes, and
// returns the number of bytes written.
inline constexpr size_t kEnvelopeFixedMax = 64;  // 9+20+1 + 4+16+1 + 8 + 1 + 2 < 64
size_t format_envelope(char* out, uint64_t mono_ns, Level level, std::string_view func);

// The number of write(2) calls the calling thread has made for log records.
// Lets tests check the one-write-per-record contract.
uint64_t thread_write_calls();

namespace detail {
// The file name part of a __FILE__ path, at compile time.
consteval const char* basename_of(const char* path) {
  const char* base = path;
  for (const char* p = path; *p != '\0'; ++p) {
    if (*p == '/') base = p + 1;
  }
  return base;
}
}  // namespace detail

}  // namespace taskring::log

// TR_LOG_<LEVEL>(fmt, ...): printf-style record carrying "[<basename>:<line>] "
// and the calling function's name. Below the threshold the arguments are not
// evaluated and nothing is formatted.
#define TR_LOG_AT_(level, fmt, ...)                                                                       \
  do {                                                                                                    \
    if (::taskring::log::enabled(level)) {                                                                \
      ::taskring::log::logf_at(level, __func__, ::taskring::log::detail::basename_of(__FILE__), __LINE__, \
                               fmt __VA_OPT__(, ) __VA_ARGS__);                                           \
    }                                                                                                     \
  } while (0)

#define TR_LOG_DEBUG(fmt, ...) TR_LOG_AT_(::taskring::log::Level::kDebug, fmt __VA_OPT__(, ) __VA_ARGS__)
#define TR_LOG_INFO(fmt, ...) TR_LOG_AT_(::taskring::log::Level::kInfo, fmt __VA_OPT__(, ) __VA_ARGS__)
#define TR_LOG_TIMING(fmt, ...) TR_LOG_AT_(::taskring::log::Level::kTiming, fmt __VA_OPT__(, ) __VA_ARGS__)
#define TR_LOG_WARN(fmt, ...) TR_LOG_AT_(::taskring::log::Level::kWarn, fmt __VA_OPT__(, ) __VA_ARGS__)
#define TR_LOG_ERROR(fmt, ...) TR_LOG_AT_(::taskring::log::Level::kError, fmt __VA_OPT__(, ) __VA_ARGS__)
