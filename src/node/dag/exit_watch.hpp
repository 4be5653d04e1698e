// ExitWatch: one thread that sleeps until a watched process exits.
//
// The engine's scheduler learns of a dead child from a waitpid, which it
// used to make every 2 ms while work ran: a wake-up that lands inside a
// timed window on a CPU the chips need. ExitWatch blocks in poll(2) on the
// children's pidfds instead (no timeout, no polling) and reports each exit
// once, so the scheduler checks liveness exactly when a child ended.
#pragma once

#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "taskring/base/status.hpp"

namespace taskring::node {

class ExitWatch {
 public:
  ExitWatch() = default;
  ~ExitWatch() { stop(); }
  ExitWatch(const ExitWatch&) = delete;
  ExitWatch& operator=(const ExitWatch&) = delete;

  // Starts the thread: `on_exit(i)` runs on it, once, when `exit_fds[i]`
  // (a pidfd, or any descriptor that turns readable when its process ends)
  // becomes readable. The descriptors stay owned by the caller and must
  // stay open until stop() returns. Fails (nothing started) when the
  // watcher's own wake-up descriptor cannot be made, or when already started.
  // With `tick_ms` > 0, `on_tick()` also runs on the thread about every
  // tick_ms (the stall check of stopped children).
  Status start(std::vector<int> exit_fds, std::function<void(size_t)> on_exit, uint64_t tick_ms = 0,
               std::function<void()> on_tick = {});
  // Stops and joins the thread; no on_exit runs after it returns. Idempotent.
  void stop();
  bool running() const { return thread_.joinable(); }

 private:
  void loop(std::vector<int> fds, const std::function<void(size_t)>& on_exit, uint64_t tick_ms,
            const std::function<void()>& on_tick);
  int stop_fd_ = -1;  // eventfd: written by stop()
  std::thread thread_;
};

}  // namespace taskring::node
