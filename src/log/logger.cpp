#include "taskring/log/logger.hpp"

#include <limits.h>
#include <pthread.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "clock_anchor.hpp"
#include "format_int.hpp"
#include "taskring/base/clock.hpp"
#include "write_fd.hpp"

namespace taskring::log {
namespace {

constexpr size_t kStackRecord = 2048;
// Bounds on the located prefix, so it always fits the stack buffer.
constexpr size_t kMaxFuncName = 256;
constexpr size_t kMaxFileName = 256;

// Where records go. Process-global like the threshold; tests and benches
// redirect it, production leaves it at stderr.
std::atomic<int> g_fd{2};

// Records longer than PIPE_BUF get no atomicity from the kernel; this mutex
// keeps them whole among this process's threads. Shorter records need no
// lock. The atfork handlers stop a child inheriting it locked.
std::mutex g_long_record_mu;

void lock_long() { g_long_record_mu.lock(); }
void unlock_long() { g_long_record_mu.unlock(); }

bool write_long_record(int fd, const char* data, size_t size) {
  static const bool registered = (pthread_atfork(lock_long, unlock_long, unlock_long), true);
  (void)registered;
  std::lock_guard<std::mutex> lock(g_long_record_mu);
  return detail::write_fd(fd, data, size);
}

std::string_view clip(const char* s, size_t max) {
  if (s == nullptr) return "?";
  return std::string_view(s, strnlen(s, max));
}

bool vemit(Level level, const char* func, const char* file, int line, const char* fmt, va_list ap) {
  if (!enabled(level) || fmt == nullptr) return false;
  char stack[kStackRecord];
  size_t prefix = format_envelope(stack, mono_ns(), level, clip(func, kMaxFuncName));
  if (file != nullptr) {
    char* p = stack + prefix;
    *p++ = '[';
    p = detail::put_str(p, clip(file, kMaxFileName));
    *p++ = ':';
    p = detail::put_dec(p, line);
    p = detail::put_str(p, "] ");
    prefix = static_cast<size_t>(p - stack);
  }
  // Room is kept for the newline and vsnprintf's terminator.
  va_list ap_copy;
  va_copy(ap_copy, ap);
  int body = vsnprintf(stack + prefix, sizeof(stack) - prefix - 1, fmt, ap_copy);
  va_end(ap_copy);
  if (body < 0) body = 0;  // an invalid format leaves an empty message
  char* buf = stack;
  char* heap = nullptr;
  if (prefix + static_cast<size_t>(body) + 2 > sizeof(stack)) {
    heap = static_cast<char*>(std::malloc(prefix + static_cast<size_t>(body) + 2));
    if (heap != nullptr) {
      std::memcpy(heap, stack, prefix);
      va_copy(ap_copy, ap);
      vsnprintf(heap + prefix, static_cast<size_t>(body) + 1, fmt, ap_copy);
      va_end(ap_copy);
      buf = heap;
    } else {
      body = static_cast<int>(sizeof(stack) - prefix - 2);  // out of memory: keep what fits
    }
  }
  size_t size = prefix + static_cast<size_t>(body);
  if (body == 0 || buf[size - 1] != '\n') buf[size++] = '\n';
  bool ok = write_record(level, buf, size);
  std::free(heap);
  return ok;
}

}  // namespace

void set_threshold(Level level) { detail::g_threshold.store(static_cast<int>(level), std::memory_order_relaxed); }

Level threshold() { return static_cast<Level>(detail::g_threshold.load(std::memory_order_relaxed)); }

int set_output_fd(int fd) { return g_fd.exchange(fd); }
int output_fd() { return g_fd.load(std::memory_order_relaxed); }

size_t format_envelope(char* out, uint64_t mono, Level level, std::string_view func) {
  char* p = detail::put_str(out, "[mono_ns=");
  p = detail::put_dec(p, mono);
  p = detail::put_str(p, "][T0x");
  p = detail::put_hex(p, static_cast<unsigned long>(pthread_self()));
  p = detail::put_str(p, "][");
  p = detail::put_str(p, level_name(level));
  p = detail::put_str(p, "] ");
  p = detail::put_str(p, func);
  p = detail::put_str(p, ": ");
  return static_cast<size_t>(p - out);
}

bool write_record(Level level, const char* record, size_t size) {
  const int fd = g_fd.load(std::memory_order_relaxed);
  if (level == Level::kTiming) detail::ensure_clock_anchor(fd);
  if (size > PIPE_BUF) return write_long_record(fd, record, size);
  return detail::write_fd(fd, record, size);
}

bool logf(Level level, const char* func, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  bool ok = vemit(level, func, nullptr, 0, fmt, ap);
  va_end(ap);
  return ok;
}

bool logf_at(Level level, const char* func, const char* file, int line, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  bool ok = vemit(level, func, file, line, fmt, ap);
  va_end(ap);
  return ok;
}

}  // namespace taskring::log
