// Compiling an upstream-style orchestration source for `taskring orch`: the
// system C++ compiler builds FILE.cpp against taskring's headers into a
// shared library, cached by a hash of everything that decides its bytes.
#pragma once

#include <string>
#include <vector>

#include "taskring/base/expected.hpp"

namespace taskring::cli::orch {

struct CompileRequest {
  std::string source;                // path of the .cpp
  std::string include_dir;           // taskring's include/ (has pto_orchestration_api.h)
  std::string cache_dir;             // where libraries are kept
  std::string compiler = "c++";      // $CXX when set
  std::vector<std::string> defines;  // NAME or NAME=VALUE
};

struct CompileResult {
  std::string library;  // path of the built (or cached) library
  bool cached = false;  // true when no compiler ran
};

// Builds (or reuses) the library for `req`. The cache key hashes the source,
// the headers an orchestration can include, the compiler and the flags.
// Errors: the source cannot be read (NOT_FOUND), the compiler failed
// (INVALID_ARGUMENT carrying its output), the cache is not writable.
Expected<CompileResult> compile_orchestration(const CompileRequest& req);

// The cache directory: $XDG_CACHE_HOME/taskring/orch when set, else
// `fallback` (the build tree's orch-cache).
std::string default_cache_dir(const std::string& fallback);

}  // namespace taskring::cli::orch
