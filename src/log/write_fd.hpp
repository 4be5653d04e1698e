// The single point where log bytes reach the kernel.
#pragma once

#include <cstddef>

namespace taskring::log::detail {

// Writes all `size` bytes with write(2): one call unless interrupted (EINTR)
// or short. Returns false on any other failure.
bool write_fd(int fd, const char* data, size_t size);

}  // namespace taskring::log::detail
