#include "strace_sink.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "clock_anchor.hpp"
#include "process.hpp"
#include "taskring/log/logger.hpp"
#include "taskring/log/strace.hpp"
#include "write_fd.hpp"

namespace taskring::log::strace {
namespace {

constexpr size_t kBufferBytes = 64 * 1024;

// The per-process span file. One per process by construction: a child
// notices the pid change, drops the parent's unflushed bytes (the parent
// writes those itself) and opens strace.<its pid>.log.
struct FileSink {
  std::mutex mu;
  std::string dir;
  int fd = -1;
  int owner_pid = 0;    // process that opened `fd` and filled `buf`
  bool failed = false;  // opening failed for owner_pid: records fall back to the log fd
  size_t len = 0;
  char buf[kBufferBytes];
};

// Whether a directory is set; checked before touching the sink so the
// default (log fd) path takes no lock.
std::atomic<bool> g_active{false};

void lock_sink();
void unlock_sink();
void flush_at_exit();

// Created on first use and never destroyed: spans may still end during
// static destruction, and the exit handler flushes it.
FileSink& sink() {
  static FileSink* s = [] {
    auto* created = new FileSink;
    pthread_atfork(lock_sink, unlock_sink, unlock_sink);
    std::atexit(flush_at_exit);
    return created;
  }();
  return *s;
}

void lock_sink() { sink().mu.lock(); }
void unlock_sink() { sink().mu.unlock(); }

void flush_locked(FileSink& s) {
  if (s.len == 0 || s.fd < 0) return;
  log::detail::write_fd(s.fd, s.buf, s.len);
  s.len = 0;
}

bool ensure_open_locked(FileSink& s) {
  const int pid = log::detail::current_pid();
  if (s.owner_pid == pid) return !s.failed;
  if (s.fd >= 0) ::close(s.fd);  // in a child this closes only the inherited copy
  s.fd = -1;
  s.len = 0;
  s.owner_pid = pid;
  std::string path = s.dir + "/strace." + std::to_string(pid) + ".log";
  s.fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  s.failed = s.fd < 0;
  if (s.failed) return false;
  // The file is its own stream: it carries this process's anchor first.
  s.len = log::detail::format_anchor_record(s.buf);
  return true;
}

void flush_at_exit() { flush_strace(); }

}  // namespace

namespace detail {

bool deliver_span(const char* record, size_t size, bool top_level) {
  if (g_active.load(std::memory_order_acquire)) {
    FileSink& s = sink();
    std::lock_guard<std::mutex> lock(s.mu);
    if (ensure_open_locked(s)) {
      if (s.len + size > sizeof(s.buf)) flush_locked(s);
      std::memcpy(s.buf + s.len, record, size);
      s.len += size;
      if (top_level) flush_locked(s);
      return true;
    }
  }
  return write_record(Level::kTiming, record, size);
}

}  // namespace detail

Status set_strace_dir(const std::string& dir) {
  if (!dir.empty()) {
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return invalid_argument("STRACE directory '" + dir + "': not an existing directory");
    }
    if (::access(dir.c_str(), W_OK) != 0) {
      return invalid_argument("STRACE directory '" + dir + "': not writable (" + std::strerror(errno) + ")");
    }
  }
  FileSink& s = sink();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.owner_pid == log::detail::current_pid()) flush_locked(s);
  if (s.fd >= 0) ::close(s.fd);
  s.fd = -1;
  s.len = 0;
  s.owner_pid = 0;
  s.failed = false;
  s.dir = dir;
  g_active.store(!dir.empty(), std::memory_order_release);
  return Status::Ok();
}

void flush_strace() {
  if (!g_active.load(std::memory_order_acquire)) return;
  FileSink& s = sink();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.owner_pid == log::detail::current_pid()) flush_locked(s);
}

}  // namespace taskring::log::strace
