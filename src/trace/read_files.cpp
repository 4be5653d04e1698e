#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "taskring/trace/parser.hpp"

namespace taskring::trace {
namespace {

Expected<std::string> read_all(const std::string& path) {
  FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) {
    int err = errno;
    std::string msg = "cannot open trace log '" + path + "': " + std::strerror(err);
    return err == ENOENT ? not_found(msg) : unavailable(msg);
  }
  std::string data;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.append(buf, n);
  bool failed = std::ferror(f);
  int err = errno;
  if (f != stdin) std::fclose(f);
  if (failed) return unavailable("cannot read trace log '" + path + "': " + std::strerror(err));
  return data;
}

}  // namespace

Expected<Trace> parse_files(const std::vector<std::string>& paths) {
  TraceParser parser;
  for (const auto& path : paths) {
    TASKRING_ASSIGN_OR_RETURN(std::string data, read_all(path));
    parser.feed(data, path);
  }
  return parser.finish();
}

}  // namespace taskring::trace
