#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "taskring/trace/parser.hpp"

namespace taskring::trace {
namespace {

constexpr size_t kChunkBytes = size_t{1} << 20;

// Streams the file at `path` into `parser` as one source.
Status feed_file(TraceParser& parser, const std::string& path, char* buf) {
  FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) {
    int err = errno;
    std::string msg = "cannot open trace log '" + path + "': " + std::strerror(err);
    return err == ENOENT ? not_found(msg) : unavailable(msg);
  }
  parser.begin_source(path);
  size_t n;
  while ((n = std::fread(buf, 1, kChunkBytes, f)) > 0) parser.feed_chunk(std::string_view(buf, n));
  bool failed = std::ferror(f);
  int err = errno;
  if (f != stdin) std::fclose(f);
  parser.end_source();
  if (failed) return unavailable("cannot read trace log '" + path + "': " + std::strerror(err));
  return Status::Ok();
}

}  // namespace

Expected<Trace> parse_files(const std::vector<std::string>& paths) {
  TraceParser parser;
  auto buf = std::make_unique<char[]>(kChunkBytes);
  for (const auto& path : paths) {
    Status s = feed_file(parser, path, buf.get());
    if (!s.ok()) return s;
  }
  Trace t = parser.finish();
  if (t.counts.over_limit > 0) {
    return resource_exhausted("the logs hold more span records than taskring trace keeps (" +
                              std::to_string(Trace::kMaxSpans) + " records or " +
                              std::to_string(Trace::kMaxRetainedBytes >> 20) + " MiB of spans); " +
                              std::to_string(t.counts.over_limit) + " record(s) over the limit; split the logs");
  }
  return t;
}

}  // namespace taskring::trace
