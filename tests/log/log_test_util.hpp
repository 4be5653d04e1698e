// Helpers for the log tests: capture the logger's fd, parse records back,
// fork children with deadlines. Everything that waits has a deadline.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "taskring/base/clock.hpp"
#include "taskring/log/logger.hpp"

namespace taskring::log::testing {

// One parsed envelope: [mono_ns=N][T0xH][LEVEL] func: message (no newline).
struct Envelope {
  uint64_t mono_ns = 0;
  std::string thread_hex;
  std::string level;
  std::string func;
  std::string message;
};

inline bool parse_u64(std::string_view s, uint64_t* out, int base = 10) {
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out, base);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

inline bool is_hex(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// Strictly parses one line (without its '\n'); nullopt if it is not exactly
// one envelope.
inline std::optional<Envelope> parse_envelope(std::string_view line) {
  Envelope e;
  constexpr std::string_view kMono = "[mono_ns=";
  if (line.substr(0, kMono.size()) != kMono) return std::nullopt;
  line.remove_prefix(kMono.size());
  size_t end = line.find(']');
  if (end == std::string_view::npos || !parse_u64(line.substr(0, end), &e.mono_ns)) return std::nullopt;
  line.remove_prefix(end + 1);
  if (line.substr(0, 4) != "[T0x") return std::nullopt;
  line.remove_prefix(4);
  end = line.find(']');
  if (end == std::string_view::npos || !is_hex(line.substr(0, end))) return std::nullopt;
  e.thread_hex = std::string(line.substr(0, end));
  line.remove_prefix(end + 1);
  if (line.substr(0, 1) != "[") return std::nullopt;
  end = line.find("] ");
  if (end == std::string_view::npos) return std::nullopt;
  e.level = std::string(line.substr(1, end - 1));
  if (e.level != "DEBUG" && e.level != "INFO" && e.level != "TIMING" && e.level != "WARN" && e.level != "ERROR")
    return std::nullopt;
  line.remove_prefix(end + 2);
  end = line.find(": ");
  if (end == std::string_view::npos || end == 0) return std::nullopt;
  e.func = std::string(line.substr(0, end));
  e.message = std::string(line.substr(end + 2));
  if (e.message.find('\n') != std::string::npos) return std::nullopt;
  return e;
}

// A parsed "[STRACE] v=1 ..." message.
struct Span {
  int64_t pid = 0, tid = 0, depth = 0, ts = 0, dur = 0;
  uint64_t inv = 0, hid = 0;
  std::string name;   // encoded
  std::string attrs;  // encoded, after the mandatory space
};

inline std::optional<Span> parse_span(std::string_view m) {
  Span s;
  constexpr std::string_view kHead = "[STRACE] v=1 ";
  if (m.substr(0, kHead.size()) != kHead) return std::nullopt;
  m.remove_prefix(kHead.size());
  auto field = [&m](std::string_view key, std::string* out, bool last) -> bool {
    if (m.substr(0, key.size()) != key || m.substr(key.size(), 1) != "=") return false;
    m.remove_prefix(key.size() + 1);
    size_t sp = m.find(' ');
    if (sp == std::string_view::npos) return false;  // every field, dur included, is followed by a space
    *out = std::string(m.substr(0, sp));
    m.remove_prefix(sp + 1);
    (void)last;
    return true;
  };
  auto i64 = [](const std::string& t, int64_t* v) {
    auto r = std::from_chars(t.data(), t.data() + t.size(), *v);
    return !t.empty() && r.ec == std::errc() && r.ptr == t.data() + t.size();
  };
  std::string v;
  if (!field("pid", &v, false) || !i64(v, &s.pid)) return std::nullopt;
  if (!field("tid", &v, false) || !i64(v, &s.tid)) return std::nullopt;
  if (!field("inv", &v, false) || !parse_u64(v, &s.inv)) return std::nullopt;
  if (!field("hid", &v, false) || !is_hex(v) || !parse_u64(v, &s.hid, 16)) return std::nullopt;
  if (!field("depth", &v, false) || !i64(v, &s.depth)) return std::nullopt;
  if (!field("name", &s.name, false)) return std::nullopt;
  if (!field("ts", &v, false) || !i64(v, &s.ts)) return std::nullopt;
  if (!field("dur", &v, true) || !i64(v, &s.dur)) return std::nullopt;
  s.attrs = std::string(m);
  return s;
}

// Splits `text` into lines; `complete` is false if it does not end in '\n'.
inline std::vector<std::string> split_lines(const std::string& text, bool* complete = nullptr) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) {
      lines.push_back(text.substr(start));
      if (complete) *complete = false;
      return lines;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  if (complete) *complete = true;
  return lines;
}

// Reads `fd` until EOF or the deadline; `*eof` says which.
inline std::string read_until_eof(int fd, Deadline deadline, bool* eof) {
  std::string out;
  char buf[65536];
  *eof = false;
  while (!deadline.expired()) {
    pollfd p{fd, POLLIN, 0};
    int ms = static_cast<int>(deadline.remaining_ns() / 1000000 + 1);
    int r = ::poll(&p, 1, ms);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *eof = n == 0;
      break;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

inline std::string read_file(const std::string& path) {
  std::string out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

// Waits for every pid until the deadline, then kills the rest. True iff all
// exited with status 0 in time.
inline bool wait_children(const std::vector<pid_t>& pids, Deadline deadline) {
  bool all_ok = true;
  for (pid_t pid : pids) {
    int status = 0;
    for (;;) {
      pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        all_ok = all_ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
        break;
      }
      if (r < 0 && errno != EINTR) {
        all_ok = false;
        break;
      }
      if (deadline.expired()) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        all_ok = false;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  return all_ok;
}

// Restores the logger's threshold and fd when it leaves scope.
class LoggerStateGuard {
 public:
  LoggerStateGuard() : level_(threshold()), fd_(output_fd()) {}
  ~LoggerStateGuard() {
    set_threshold(level_);
    set_output_fd(fd_);
  }

 private:
  Level level_;
  int fd_;
};

// A pipe whose read end is drained by a thread into a string.
class PipeCapture {
 public:
  PipeCapture() {
    int fds[2];
    ok_ = ::pipe2(fds, O_CLOEXEC) == 0;
    rd_ = fds[0];
    wr_ = fds[1];
    reader_ = std::thread([this] { text_ = read_until_eof(rd_, Deadline::after_ms(60000), &eof_); });
  }
  ~PipeCapture() {
    close_write();
    if (reader_.joinable()) reader_.join();
    ::close(rd_);
  }
  bool ok() const { return ok_; }
  int write_fd() const { return wr_; }
  // Closes the write end and returns everything read; `eof` false on timeout.
  std::string finish(bool* eof = nullptr) {
    close_write();
    if (reader_.joinable()) reader_.join();
    if (eof) *eof = eof_;
    return text_;
  }

 private:
  void close_write() {
    if (wr_ >= 0) ::close(wr_);
    wr_ = -1;
  }
  bool ok_ = false;
  int rd_ = -1, wr_ = -1;
  bool eof_ = false;
  std::string text_;
  std::thread reader_;
};

}  // namespace taskring::log::testing
