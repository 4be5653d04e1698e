#include "taskring/log/strace.hpp"

#include <atomic>
#include <charconv>

#include "format_int.hpp"
#include "process.hpp"
#include "strace_sink.hpp"
#include "taskring/base/clock.hpp"
#include "taskring/log/percent_encode.hpp"

namespace taskring::log::strace {
namespace {

using log::detail::put_dec;
using log::detail::put_hex;
using log::detail::put_str;

// Widest rendering of every fixed part of a span record; with the two field
// capacities it must stay within _POSIX_PIPE_BUF so records never tear.
constexpr size_t kFixedMax = kEnvelopeFixedMax + kEmitFunc.size()  // envelope
                             + sizeof("[STRACE] v=1 pid=") - 1 + 11 + sizeof(" tid=") - 1 + 11 + sizeof(" inv=") - 1 +
                             20 + sizeof(" hid=") - 1 + 16 + sizeof(" depth=") - 1 + 11 + sizeof(" name=") - 1 +
                             sizeof(" ts=") - 1 + 20 + sizeof(" dur=") - 1 + 20 + 1 /* space before attrs */ +
                             1 /* newline */;
static_assert(kFixedMax <= 256, "envelope + fixed STRACE fields exceed their 256-byte budget");
static_assert(kFixedMax + kNameCapacity + kAttrsCapacity <= kMaxRecord,
              "a STRACE record could exceed _POSIX_PIPE_BUF and tear on a shared pipe");

// Process-wide so that (pid, inv) is unique across concurrent runs.
std::atomic<uint64_t> g_next_inv{1};

struct ThreadSpanState {
  uint64_t inv = 0;
  uint64_t hid = 0;
  int depth = 0;
};
thread_local ThreadSpanState t_state;

}  // namespace

uint64_t alloc_invocation() { return g_next_inv.fetch_add(1, std::memory_order_relaxed); }

Attrs& Attrs::add(const Attr& a) {
  if (truncated_) return *this;
  FieldEncoder enc(buf_, kAttrsCapacity, size_, last_unit_, truncated_);
  if (size_ != 0) enc.put_separator(' ');
  enc.put_text(a.key);
  enc.put_separator('=');
  char num[32];
  switch (a.kind) {
    case Attr::Kind::kInt: enc.put_text({num, static_cast<size_t>(put_dec(num, a.i) - num)}); break;
    case Attr::Kind::kUint: enc.put_text({num, static_cast<size_t>(put_dec(num, a.u) - num)}); break;
    case Attr::Kind::kDouble: {
      auto r = std::to_chars(num, num + sizeof(num), a.d);
      enc.put_text({num, static_cast<size_t>(r.ptr - num)});
      break;
    }
    case Attr::Kind::kString: enc.put_text(a.s); break;
  }
  size_ = enc.size();
  last_unit_ = enc.last_unit();
  truncated_ = enc.truncated();
  return *this;
}

size_t format_span(char* out, uint64_t mono, std::string_view name, int64_t ts, int64_t dur, uint64_t inv, uint64_t hid,
                   int depth, const Attrs& attrs) {
  char* p = out + format_envelope(out, mono, Level::kTiming, kEmitFunc);
  p = put_str(p, "[STRACE] v=1 pid=");
  p = put_dec(p, log::detail::current_pid());
  p = put_str(p, " tid=");
  p = put_dec(p, log::detail::current_tid());
  p = put_str(p, " inv=");
  p = put_dec(p, inv);
  p = put_str(p, " hid=");
  p = put_hex(p, hid);
  p = put_str(p, " depth=");
  p = put_dec(p, depth);
  p = put_str(p, " name=");
  FieldEncoder enc(p, kNameCapacity);
  enc.put_text(name);
  p += enc.size();
  p = put_str(p, " ts=");
  p = put_dec(p, ts);
  p = put_str(p, " dur=");
  p = put_dec(p, dur);
  *p++ = ' ';
  p = put_str(p, attrs.text());
  *p++ = '\n';
  return static_cast<size_t>(p - out);
}

bool emit_span(std::string_view name, int64_t ts, int64_t dur, uint64_t inv, uint64_t hid, int depth,
               const Attrs& attrs) {
  if (!enabled()) return false;  // re-checked here: the level may have changed since the span opened
  char buf[kMaxRecord];
  size_t n = format_span(buf, mono_ns(), name, ts, dur, inv, hid, depth, attrs);
  return detail::deliver_span(buf, n, depth == 0);
}

static_assert(kMaxRecord <= SpanBatch::kBatchBytes, "a batch must hold at least one record");

void SpanBatch::add(std::string_view name, int64_t ts, int64_t dur, uint64_t inv, uint64_t hid, int depth,
                    const Attrs& attrs) {
  if (!enabled()) return;
  if (size_ + kMaxRecord > sizeof(buf_)) flush();
  size_ += format_span(buf_ + size_, mono_ns(), name, ts, dur, inv, hid, depth, attrs);
  top_level_ |= depth == 0;
}

bool SpanBatch::flush() {
  if (size_ > 0) ok_ &= detail::deliver_span(buf_, size_, top_level_);
  size_ = 0;
  top_level_ = false;
  const bool ok = ok_;
  ok_ = true;
  return ok;
}

uint64_t current_invocation() { return t_state.inv; }
uint64_t current_hid() { return t_state.hid; }
int current_depth() { return t_state.depth; }

InvocationScope::InvocationScope(uint64_t inv, uint64_t hid)
    : inv_(inv), prev_inv_(t_state.inv), prev_hid_(t_state.hid) {
  t_state.inv = inv;
  t_state.hid = hid;
}

InvocationScope::InvocationScope(uint64_t inv, uint64_t hid, int depth) : InvocationScope(inv, hid) {
  prev_depth_ = t_state.depth;
  t_state.depth = depth;
}

InvocationScope::~InvocationScope() {
  t_state.inv = prev_inv_;
  t_state.hid = prev_hid_;
  if (prev_depth_ >= 0) t_state.depth = prev_depth_;
}

void StraceSpan::open(std::string_view name, uint64_t inv, uint64_t hid) {
  name_ = name;
  inv_ = inv;
  hid_ = hid;
  active_ = true;
  depth_ = t_state.depth++;
  ts_ = static_cast<int64_t>(mono_ns());
}

void StraceSpan::close() {
  int64_t end = static_cast<int64_t>(mono_ns());
  t_state.depth = depth_;
  emit_span(name_, ts_, end - ts_, inv_, hid_, depth_, attrs_);
}

}  // namespace taskring::log::strace
