// Capturing a timed job's stderr without waking up inside its timed windows.
//
// `taskring bench` forks a job whose processes (a node runner and its chip
// children) all write their [STRACE] records to one pipe, and reads that
// pipe while the job is timed. A reader that waits on the pipe is woken by
// every write, which runs it on a CPU the job needs, inside the window being
// measured. capture_stream() instead waits on a second pipe on which the
// job writes one byte after each round (a tick), and drains the stream then.
#pragma once

#include <cstdint>
#include <string>

#include "taskring/base/clock.hpp"

namespace taskring::trace {

struct Captured {
  std::string bytes;       // everything read, in order
  bool timed_out = false;  // `deadline` passed before the stream ended
};

// Reads `data_fd` (the read end of the job's stream pipe, which it makes
// non-blocking and grows to 1 MiB where allowed) until every writer has
// closed it, or `deadline`. `tick_fd` (-1: none) is the read end of the
// tick pipe. The stream is drained on each tick, when the tick pipe closes
// (then it follows the stream to its end), and at least every 100 ms. A
// drain that finds more than a quarter of the pipe filled makes it follow
// the stream (wake on data) until a drain finds less, so a round that writes
// more than the pipe holds is slowed, never stopped. `size_hint`: bytes
// expected; that much buffer is faulted in before the first read (new pages
// cost a hypervisor exit each on a shadow-paging guest). Closes neither fd.
Captured capture_stream(int data_fd, int tick_fd, Deadline deadline, uint64_t size_hint);

}  // namespace taskring::trace
