// Threads of the calling process, for tests that check which threads a
// component starts (or does not).
#pragma once

#include <dirent.h>

namespace taskring::testing {

// Entries of /proc/self/task; 0 if it cannot be read.
inline int process_thread_count() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

}  // namespace taskring::testing
