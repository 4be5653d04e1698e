// Threads of the calling process, for tests that check which threads a
// component starts (or does not).
#pragma once

#include "taskring/base/process_threads.hpp"

namespace taskring::testing {

// Threads of this process once the ones already joined have left the list
// (process_threads, waiting up to 50 ms for the count to reach 1); 0 if
// /proc/self/task cannot be read.
inline int process_thread_count() {
  auto t = process_threads(1, Deadline::after_ms(50));
  return t.ok() ? t->count : 0;
}

}  // namespace taskring::testing
