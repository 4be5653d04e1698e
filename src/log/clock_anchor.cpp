#include "clock_anchor.hpp"

#include <sched.h>

#include <atomic>

#include "format_int.hpp"
#include "process.hpp"
#include "taskring/base/clock.hpp"
#include "taskring/log/logger.hpp"
#include "write_fd.hpp"

namespace taskring::log::detail {
namespace {

// +pid: the anchor of process `pid` is out; -pid: a thread of `pid` is
// writing it; anything else: this process has none yet. Keyed by pid so a
// forked child, which inherits the parent's value, writes its own.
std::atomic<int> g_anchor_state{0};

}  // namespace

size_t format_anchor_record(char* out) {
  uint64_t mono = mono_ns();
  uint64_t wall = wall_ns();
  char* p = out + format_envelope(out, mono, Level::kTiming, "clock_anchor");
  p = put_str(p, "[CLOCK_ANCHOR] v=1 pid=");
  p = put_dec(p, current_pid());
  p = put_str(p, " mono_ns=");
  p = put_dec(p, mono);
  p = put_str(p, " wall_ns=");
  p = put_dec(p, wall);
  *p++ = '\n';
  return static_cast<size_t>(p - out);
}

void ensure_clock_anchor(int fd) {
  const int pid = current_pid();
  int state = g_anchor_state.load(std::memory_order_acquire);
  if (state == pid) return;
  // Another thread of this process may be writing the anchor; wait for it
  // briefly so our record follows it, but never longer than the deadline.
  const Deadline deadline = Deadline::after_ms(100);
  for (;;) {
    if (state == pid) return;
    if (state == -pid) {
      if (deadline.expired()) return;
      sched_yield();
      state = g_anchor_state.load(std::memory_order_acquire);
      continue;
    }
    if (g_anchor_state.compare_exchange_weak(state, -pid, std::memory_order_acq_rel)) {
      char buf[kAnchorRecordMax];
      size_t n = format_anchor_record(buf);
      // On failure the next TIMING record retries.
      g_anchor_state.store(write_fd(fd, buf, n) ? pid : 0, std::memory_order_release);
      return;
    }
  }
}

}  // namespace taskring::log::detail
