#include "write_fd.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace taskring::log {
namespace detail {

thread_local uint64_t t_write_calls = 0;

bool write_fd(int fd, const char* data, size_t size) {
  while (size > 0) {
    ++t_write_calls;
    ssize_t n = ::write(fd, data, size);
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace detail

uint64_t thread_write_calls() { return detail::t_write_calls; }

}  // namespace taskring::log
