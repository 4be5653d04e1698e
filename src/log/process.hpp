// Process and thread identity for log records, cheap after the first call.
#pragma once

namespace taskring::log::detail {

// getpid(), cached; the cache is refreshed in every fork(2) child through a
// pthread_atfork handler, so forked ranks see their own pid.
int current_pid();
// The kernel thread id (gettid), cached per thread and re-read after fork.
int current_tid();

}  // namespace taskring::log::detail
