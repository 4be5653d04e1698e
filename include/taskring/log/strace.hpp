// STRACE spans: upstream-compatible "[STRACE] v=1" timing records.
//
// A span is emitted as one TIMING log record (func "emit_host_span"):
//   [STRACE] v=1 pid=<pid> tid=<gettid> inv=<u64> hid=<hex u64> depth=<int>
//            name=<enc> ts=<mono ns> dur=<ns> <k=v ...>
// (one line; the space after dur= is always present, as upstream). name is
// percent-encoded into at most kNameCapacity bytes, attributes into at most
// kAttrsCapacity (percent_encode.hpp), so every record fits kMaxRecord bytes
// and is atomic on any POSIX pipe.
//
// Below TIMING a span costs one relaxed load: no clock read, no formatting.
//
// With TASKRING_STRACE_DIR=<dir> (init_logging) or set_strace_dir(), spans go
// to <dir>/strace.<pid>.log instead of the log fd: buffered, flushed at the
// end of every depth-0 span, by flush_strace() and at exit(3); a forked child
// drops its parent's unflushed bytes and opens its own file, so ranks never
// share one. Each such file starts with the process's clock anchor record.
// Children that leave with _exit(2) must end their top-level span (or call
// flush_strace()) first.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "taskring/base/status.hpp"
#include "taskring/log/logger.hpp"

namespace taskring::log::strace {

inline constexpr size_t kNameCapacity = 64;
inline constexpr size_t kAttrsCapacity = 192;
inline constexpr size_t kMaxRecord = 512;  // _POSIX_PIPE_BUF
inline constexpr std::string_view kEmitFunc = "emit_host_span";
inline constexpr std::string_view kStraceDirVar = "TASKRING_STRACE_DIR";

// FNV-1a 64 of `bytes`: the callable hash ("hid") taskring uses when there is
// no build id.
constexpr uint64_t fnv1a64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

// Whether spans are recorded now (threshold <= TIMING).
inline bool enabled() { return log::enabled(Level::kTiming); }

// A fresh invocation id from the process-wide counter (first id is 1).
uint64_t alloc_invocation();

// One attribute. Keys and string values are not copied: they must live until
// the Attr is added to an Attrs (which encodes at once).
struct Attr {
  enum class Kind { kInt, kUint, kDouble, kString };

  template <std::signed_integral T>
  Attr(std::string_view k, T v) : key(k), kind(Kind::kInt), i(v) {}
  template <std::unsigned_integral T>
  Attr(std::string_view k, T v) : key(k), kind(Kind::kUint), u(v) {}
  Attr(std::string_view k, double v) : key(k), kind(Kind::kDouble), d(v) {}
  Attr(std::string_view k, std::string_view v) : key(k), kind(Kind::kString), s(v) {}
  Attr(std::string_view k, const char* v) : key(k), kind(Kind::kString), s(v) {}

  std::string_view key;
  Kind kind;
  union {
    int64_t i;
    uint64_t u;
    double d;
  };
  std::string_view s;
};

// Encoded attribute text "k=v k=v", at most kAttrsCapacity bytes. Numbers are
// written in decimal (doubles shortest round-trip); keys and string values are
// percent-encoded. Once the capacity is reached the text ends in '~' and later
// attributes are ignored.
class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<Attr> attrs) {
    for (const Attr& a : attrs) add(a);
  }
  Attrs& add(const Attr& attr);
  std::string_view text() const { return {buf_, size_}; }
  bool truncated() const { return truncated_; }

 private:
  char buf_[kAttrsCapacity];
  size_t size_ = 0;
  size_t last_unit_ = 0;
  bool truncated_ = false;
};

// Emits one span record; every span taskring records goes through here.
// `ts` and `dur` are CLOCK_MONOTONIC nanoseconds (or device-clock offsets for
// spans carrying clk=dev); `depth` is the nesting depth, outermost 0. Returns
// false when spans are disabled or the record could not be written.
bool emit_span(std::string_view name, int64_t ts, int64_t dur, uint64_t inv, uint64_t hid, int depth,
               const Attrs& attrs = Attrs());

// Span records delivered together: one write(2) for the whole batch where
// emit_span makes one each, which matters when every rank of a run writes
// its spans into one pipe while its peers are still being timed. Each write
// is whole records of at most kBatchBytes (Linux's PIPE_BUF), so a batch is
// as atomic on a pipe as a single record; a batch that outgrows it goes out
// in several writes, in order. Records keep the order they were added in and
// leave at flush() or destruction. Spans disabled at add() are dropped, as
// emit_span drops them.
class SpanBatch {
 public:
  static constexpr size_t kBatchBytes = 4096;

  SpanBatch() = default;
  ~SpanBatch() { flush(); }
  SpanBatch(const SpanBatch&) = delete;
  SpanBatch& operator=(const SpanBatch&) = delete;

  // Adds one record, as emit_span(name, ts, dur, inv, hid, depth, attrs).
  void add(std::string_view name, int64_t ts, int64_t dur, uint64_t inv, uint64_t hid, int depth,
           const Attrs& attrs = Attrs());
  // Delivers the records added since the last flush; false when one could
  // not be written.
  bool flush();

 private:
  char buf_[kBatchBytes];
  size_t size_ = 0;
  bool top_level_ = false;  // a depth-0 record is in the batch: flush a file sink after it
  bool ok_ = true;
};

// Renders the record emit_span would write (envelope included, `mono_ns` in
// the envelope) into `out` (kMaxRecord bytes) and returns its size. For
// tests and benchmarks.
size_t format_span(char* out, uint64_t mono_ns, std::string_view name, int64_t ts, int64_t dur, uint64_t inv,
                   uint64_t hid, int depth, const Attrs& attrs);

// The calling thread's bound invocation, callable hash and current depth.
uint64_t current_invocation();
uint64_t current_hid();
int current_depth();

// Binds (inv, hid) to the calling thread for the scope's lifetime and
// restores the previous binding at exit. Spans opened meanwhile carry them.
class InvocationScope {
 public:
  InvocationScope(uint64_t inv, uint64_t hid);
  // Also sets the span depth: spans opened in the scope on another thread
  // nest as if opened where (inv, hid, depth) were read (current_*()).
  InvocationScope(uint64_t inv, uint64_t hid, int depth);
  // Binds a fresh invocation id.
  explicit InvocationScope(uint64_t hid) : InvocationScope(alloc_invocation(), hid) {}
  ~InvocationScope();
  InvocationScope(const InvocationScope&) = delete;
  InvocationScope& operator=(const InvocationScope&) = delete;
  uint64_t inv() const { return inv_; }

 private:
  uint64_t inv_, prev_inv_, prev_hid_;
  int prev_depth_ = -1;  // -1: the depth was not set
};

// RAII span: stamps ts and enters depth+1 at construction; at destruction
// leaves the depth and emits with the depth it was opened at. `name` must
// outlive the span (dotted names are normally literals). Inactive (and free)
// when spans were disabled at construction.
class StraceSpan {
 public:
  // The gate comes first and is inline, so a disabled span costs one load.
  explicit StraceSpan(std::string_view name) {
    if (enabled()) open(name, current_invocation(), current_hid());
  }
  StraceSpan(std::string_view name, uint64_t inv, uint64_t hid) {
    if (enabled()) open(name, inv, hid);
  }
  ~StraceSpan() {
    if (active_) close();
  }
  StraceSpan(const StraceSpan&) = delete;
  StraceSpan& operator=(const StraceSpan&) = delete;

  template <typename V>
  StraceSpan& attr(std::string_view key, V value) {
    if (active_) attrs_.add(Attr(key, value));
    return *this;
  }
  bool active() const { return active_; }

 private:
  void open(std::string_view name, uint64_t inv, uint64_t hid);
  void close();

  std::string_view name_;
  uint64_t inv_ = 0, hid_ = 0;
  int64_t ts_ = 0;
  int depth_ = 0;
  bool active_ = false;
  Attrs attrs_;
};

// Sends spans to <dir>/strace.<pid>.log. `dir` must be an existing writable
// directory; the error names it. Empty `dir` restores the log fd.
Status set_strace_dir(const std::string& dir);
// Writes buffered span records of this process to its file.
void flush_strace();

}  // namespace taskring::log::strace
