// `taskring orch --check PATH...`: compiles every orchestration source under
// the given files or folders against taskring's headers (syntax only, no run)
// and reports one line per file: ok, or the first compiler error with a hint
// where the error names an upstream item that taskring spells otherwise or
// lacks (docs/compat.md).
#pragma once

#include <string>
#include <vector>

namespace taskring::cli::orch {

struct CheckRequest {
  std::vector<std::string> paths;    // files or folders (searched for .cpp/.cc/.cxx)
  std::string include_dir;           // taskring's include/
  std::string compiler = "c++";      // $CXX when set
  std::vector<std::string> defines;  // NAME or NAME=VALUE
  bool json = false;
};

// Prints the report to stdout. Returns the exit status: 0 every file
// compiles, 1 at least one does not (or a path does not exist), 2 no source
// was found under the paths.
int run_check(const CheckRequest& req);

// The hint for a compiler error line, or "" when it names nothing known.
std::string hint_for_error(const std::string& error_line);

}  // namespace taskring::cli::orch
