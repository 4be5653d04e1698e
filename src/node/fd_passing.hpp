// Passing a file descriptor between the parent and a child over a socket
// pair made before the fork (SCM_RIGHTS): how a comm domain's shared object
// reaches its members. Neither call blocks.
#pragma once

#include "taskring/base/expected.hpp"

namespace taskring::node {

// Queues a copy of `fd` on `sock`. UNAVAILABLE with errno's text on failure.
Status send_fd(int sock, int fd);
// Takes the next queued descriptor (close-on-exec) from `sock`; UNAVAILABLE
// when none is queued.
Expected<int> receive_fd(int sock);

}  // namespace taskring::node
