#include "taskring/base/shared_futex.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <ctime>

namespace taskring {

namespace {
long futex(std::atomic<uint32_t>* addr, int op, uint32_t val, const timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), op, val, timeout, nullptr, 0);
}
}  // namespace

void shared_futex_wait(std::atomic<uint32_t>* word, uint32_t seen, uint64_t timeout_ns) {
  timespec ts;
  ts.tv_sec = static_cast<time_t>(timeout_ns / 1000000000ull);
  ts.tv_nsec = static_cast<long>(timeout_ns % 1000000000ull);
  futex(word, FUTEX_WAIT, seen, &ts);
}

void shared_futex_wake_all(std::atomic<uint32_t>* word) { futex(word, FUTEX_WAKE, INT_MAX, nullptr); }

#ifdef SYS_futex_waitv
namespace {
long wait_vector(struct futex_waitv* waiters, unsigned n, const timespec* abs_timeout) {
  return syscall(SYS_futex_waitv, waiters, n, 0u, abs_timeout, CLOCK_MONOTONIC);
}
struct futex_waitv shared_waiter(std::atomic<uint32_t>* word, uint32_t seen) {
  struct futex_waitv w {};
  w.val = seen;
  w.uaddr = reinterpret_cast<uintptr_t>(word);
  w.flags = FUTEX_32;  // no FUTEX_PRIVATE_FLAG: keyed by the page, across processes
  return w;
}
}  // namespace

bool shared_futex_wait_either_available() {
  // A property of the running kernel (or of a seccomp filter), the same for
  // the life of the process: probed once. Zero waiters is EINVAL where the
  // call exists and ENOSYS where it does not.
  static const bool available = [] {
    errno = 0;
    return wait_vector(nullptr, 0, nullptr) == -1 && errno == EINVAL;
  }();
  return available;
}

void shared_futex_wait_any(std::atomic<uint32_t>* const* words, const uint32_t* seen, int n, uint64_t timeout_ns) {
  if (n <= 0) return;
  if (n == 1 || n > kSharedFutexWaitMax || !shared_futex_wait_either_available())
    return shared_futex_wait(words[0], seen[0], timeout_ns);
  struct futex_waitv waiters[kSharedFutexWaitMax];
  for (int i = 0; i < n; ++i) waiters[i] = shared_waiter(words[i], seen[i]);
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  const uint64_t end =
      static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec) + timeout_ns;
  timespec abs;
  abs.tv_sec = static_cast<time_t>(end / 1000000000ull);
  abs.tv_nsec = static_cast<long>(end % 1000000000ull);
  wait_vector(waiters, static_cast<unsigned>(n), &abs);
}
#else
bool shared_futex_wait_either_available() { return false; }
void shared_futex_wait_any(std::atomic<uint32_t>* const* words, const uint32_t* seen, int n, uint64_t timeout_ns) {
  if (n > 0) shared_futex_wait(words[0], seen[0], timeout_ns);
}
#endif

void shared_futex_wait_either(std::atomic<uint32_t>* a, uint32_t seen_a, std::atomic<uint32_t>* b, uint32_t seen_b,
                              uint64_t timeout_ns) {
  std::atomic<uint32_t>* const words[2] = {a, b};
  const uint32_t seen[2] = {seen_a, seen_b};
  shared_futex_wait_any(words, seen, 2, timeout_ns);
}

}  // namespace taskring
