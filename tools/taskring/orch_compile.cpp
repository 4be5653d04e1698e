#include "orch_compile.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace taskring::cli::orch {
namespace fs = std::filesystem;
namespace {

uint64_t fnv1a(uint64_t h, const std::string& bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

Expected<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every header an orchestration may include, in a stable order.
std::vector<fs::path> api_headers(const std::string& include_dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(include_dir, ec)) {
    if (e.is_regular_file() && (e.path().extension() == ".h" || e.path().extension() == ".hpp")) {
      out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

std::string default_cache_dir(const std::string& fallback) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg != '\0') return std::string(xdg) + "/taskring/orch";
  return fallback;
}

Expected<CompileResult> compile_orchestration(const CompileRequest& req) {
  auto src = read_file(req.source);
  if (!src.ok()) return not_found("orchestration source: " + src.status().message());
  // A bare file name has no parent: "-I" alone would take the next argument
  // (-o) as its directory.
  std::string source_dir = fs::path(req.source).parent_path().string();
  if (source_dir.empty()) source_dir = ".";
  std::vector<std::string> flags = {"-std=c++20", "-O2", "-fPIC", "-shared",
                                    "-Wl,--no-undefined", "-I" + req.include_dir, "-I" + source_dir};
  for (const std::string& d : req.defines) flags.push_back("-D" + d);

  uint64_t h = 0xcbf29ce484222325ull;
  h = fnv1a(h, *src);
  h = fnv1a(h, req.compiler);
  for (const std::string& f : flags) h = fnv1a(h, f);
  for (const fs::path& p : api_headers(req.include_dir)) {
    auto text = read_file(p.string());
    if (text.ok()) h = fnv1a(fnv1a(h, p.filename().string()), *text);
  }
  char name[64];
  std::snprintf(name, sizeof(name), "orch-%016" PRIx64 ".so", h);
  const fs::path lib = fs::path(req.cache_dir) / name;
  std::error_code ec;
  if (fs::exists(lib, ec)) return CompileResult{lib.string(), true};
  fs::create_directories(req.cache_dir, ec);
  if (ec) return unavailable("cannot create the orchestration cache " + req.cache_dir + ": " + ec.message());

  // Build into a private name, then rename: a concurrent run never loads a
  // half-written library.
  const fs::path tmp = lib.string() + ".tmp" + std::to_string(::getpid());
  std::string cmd = quote(req.compiler);
  for (const std::string& f : flags) cmd += " " + quote(f);
  cmd += " -o " + quote(tmp.string()) + " " + quote(req.source) + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return unavailable("cannot run the compiler: " + cmd);
  std::string output;
  char buf[4096];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof(buf), p)) > 0) output.append(buf, got);
  const int rc = ::pclose(p);
  if (rc != 0) {
    fs::remove(tmp, ec);
    const int code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    return invalid_argument("compiling " + req.source + " failed (" + req.compiler + " exit " + std::to_string(code) +
                            "):\n" + output);
  }
  fs::rename(tmp, lib, ec);
  if (ec) return unavailable("cannot move the library into the cache " + lib.string() + ": " + ec.message());
  return CompileResult{lib.string(), false};
}

}  // namespace taskring::cli::orch
