#include "taskring/trace/capture.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

namespace taskring::trace {
namespace {

constexpr int kPipeBytes = 1 << 20;
constexpr int kBackstopMs = 100;
constexpr size_t kChunk = 64 << 10;
constexpr uint64_t kMaxUpFront = 256ull << 20;

class Buffer {
 public:
  explicit Buffer(uint64_t hint) : buf_(std::min<uint64_t>(std::max<uint64_t>(hint, kChunk), kMaxUpFront)) {}
  // Reads what `fd` holds now. False at EOF or on an error; `*got`: bytes read.
  bool drain(int fd, size_t* got) {
    *got = 0;
    while (true) {
      if (buf_.size() - used_ < kChunk) buf_.resize(buf_.size() * 2);
      const ssize_t n = read(fd, buf_.data() + used_, buf_.size() - used_);
      if (n > 0) {
        used_ += static_cast<size_t>(n);
        *got += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      return n < 0 && errno == EAGAIN;
    }
  }
  std::string take() const { return std::string(buf_.data(), used_); }

 private:
  std::vector<char> buf_;  // value-initialised: every page is touched up front
  size_t used_ = 0;
};

}  // namespace

Captured capture_stream(int data_fd, int tick_fd, Deadline deadline, uint64_t size_hint) {
  (void)fcntl(data_fd, F_SETPIPE_SZ, kPipeBytes);  // best effort: capped by /proc/sys/fs/pipe-max-size
  const int size = fcntl(data_fd, F_GETPIPE_SZ);
  const size_t quarter = static_cast<size_t>(size > 0 ? size : 65536) / 4;
  (void)fcntl(data_fd, F_SETFL, fcntl(data_fd, F_GETFL) | O_NONBLOCK);
  Buffer buf(size_hint);
  Captured out;
  // A poll for no event still reports the hang-up, so the stream's end
  // wakes the loop even while it does not follow the data.
  bool follow_data = tick_fd < 0;
  while (true) {
    if (deadline.expired()) {
      out.timed_out = true;
      break;
    }
    pollfd p[2] = {{data_fd, static_cast<short>(follow_data ? POLLIN : 0), 0}, {tick_fd, POLLIN, 0}};
    const uint64_t left_ms = deadline.remaining_ns() / 1000000 + 1;
    (void)poll(p, tick_fd >= 0 ? 2 : 1, static_cast<int>(std::min<uint64_t>(left_ms, kBackstopMs)));
    if (tick_fd >= 0 && (p[1].revents & (POLLIN | POLLHUP)) != 0) {
      char b[64];
      if (read(tick_fd, b, sizeof b) <= 0) tick_fd = -1;  // the job is gone: follow the stream to its end
    }
    size_t got = 0;
    if (!buf.drain(data_fd, &got)) break;  // EOF: every writer is gone
    follow_data = tick_fd < 0 || got >= quarter;
  }
  out.bytes = buf.take();
  return out;
}

}  // namespace taskring::trace
