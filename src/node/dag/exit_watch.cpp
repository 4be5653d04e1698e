#include "exit_watch.hpp"

#include "taskring/base/clock.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace taskring::node {

Status ExitWatch::start(std::vector<int> exit_fds, std::function<void(size_t)> on_exit, uint64_t tick_ms,
                        std::function<void()> on_tick) {
  if (thread_.joinable()) return failed_precondition("ExitWatch::start: already started");
  stop_fd_ = eventfd(0, EFD_CLOEXEC);
  if (stop_fd_ < 0) return unavailable(std::string("ExitWatch::start: eventfd: ") + std::strerror(errno));
  if (!on_tick) tick_ms = 0;
  thread_ = std::thread([this, fds = std::move(exit_fds), f = std::move(on_exit), tick_ms,
                         t = std::move(on_tick)]() mutable { loop(std::move(fds), f, tick_ms, t); });
  return Status::Ok();
}

void ExitWatch::loop(std::vector<int> fds, const std::function<void(size_t)>& on_exit, uint64_t tick_ms,
                     const std::function<void()>& on_tick) {
  const uint64_t tick_ns = tick_ms * 1'000'000;
  uint64_t next_tick = mono_ns() + tick_ns;
  std::vector<pollfd> p(fds.size() + 1);
  for (size_t i = 0; i < fds.size(); ++i) p[i] = {fds[i], POLLIN, 0};
  p.back() = {stop_fd_, POLLIN, 0};
  while (true) {
    int timeout = -1;
    if (tick_ns > 0) {
      const uint64_t now = mono_ns();
      if (now >= next_tick) {
        on_tick();
        next_tick = now + tick_ns;
      }
      timeout = static_cast<int>((next_tick - now + 999'999) / 1'000'000);
    }
    const int n = poll(p.data(), p.size(), timeout);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // cannot wait any more: the scheduler's slice-bounded check remains
    }
    if (p.back().revents != 0) return;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (p[i].fd < 0 || p[i].revents == 0) continue;
      p[i].fd = -1;  // an exited pidfd stays readable: report it once
      on_exit(i);
    }
  }
}

void ExitWatch::stop() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    (void)!write(stop_fd_, &one, sizeof one);
    thread_.join();
  }
  if (stop_fd_ >= 0) {
    ::close(stop_fd_);
    stop_fd_ = -1;
  }
}

}  // namespace taskring::node
