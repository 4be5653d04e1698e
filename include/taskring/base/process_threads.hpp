// The threads of the calling process, as the kernel lists them.
//
// Code that forks (a node's chip children) must run on one thread: a fork
// copies only the calling thread, and locks the others hold stay locked in
// the child. Counting the entries of /proc/self/task right after a join is
// not enough to check that: the kernel wakes the joiner (pthread_join) from
// the exiting thread's own exit path, before it removes the thread from the
// list, so a thread that was just joined can still be listed for a moment
// (measured: 6–21 of 20,000 join-then-count pairs on a 2-vCPU guest).
#pragma once

#include <string>

#include "taskring/base/clock.hpp"
#include "taskring/base/expected.hpp"

namespace taskring {

struct ProcessThreads {
  int count = 0;
  // "comm (tid N)" of each listed thread, comma-separated, for error messages.
  std::string names;
};

// Lists the calling process's threads. While more than `expected` are
// listed it reads the list again until the count falls to `expected` or
// `settle` passes, so a thread that was joined (or is exiting on its own)
// before the call is not counted; a thread that keeps running is, after
// `settle`. Fails (UNAVAILABLE) when /proc/self/task cannot be read.
Expected<ProcessThreads> process_threads(int expected, Deadline settle);

}  // namespace taskring
