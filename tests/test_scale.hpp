// How much work a scalable test (random programs, stress repeats) does.
//
// Every run executes a bounded slice (what CI runs, seconds); the full amount
// runs when TASKRING_SLOW_TESTS=1, which the CTest tests labelled `slow` set
// (`make test-slow`, or `ctest --preset slow`). Sanitizer builds run 5-15x
// slower, so they get their own, smaller slice.
#pragma once

#include <cstdlib>
#include <cstring>

namespace taskring::testing {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitizedBuild = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif
#else
inline constexpr bool kSanitizedBuild = false;
#endif

// True when TASKRING_SLOW_TESTS is exactly "1".
inline bool slow_tests_enabled() {
  const char* v = std::getenv("TASKRING_SLOW_TESTS");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

// `full` when slow tests are enabled, else `sanitized` in a sanitizer build,
// else `slice`.
inline int test_scale(int slice, int sanitized, int full) {
  if (slow_tests_enabled()) return full;
  return kSanitizedBuild ? sanitized : slice;
}

}  // namespace taskring::testing
