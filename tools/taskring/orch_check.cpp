#include "orch_check.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace taskring::cli::orch {
namespace fs = std::filesystem;
namespace {

bool is_source(const fs::path& p) {
  const std::string e = p.extension().string();
  return e == ".cpp" || e == ".cc" || e == ".cxx";
}

struct Entry {
  std::string file;
  bool ok = false;
  std::string error;  // the first error line (or why the path was not compiled)
  std::string hint;
};

// The sources under `paths` in the order given, a folder's sources sorted.
// A path that does not exist is kept (as `missing`) so it gets its own line.
struct Source {
  std::string path;
  bool missing = false;
};
std::vector<Source> collect(const std::vector<std::string>& paths) {
  std::vector<Source> out;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::recursive_directory_iterator(p, ec)) {
        if (e.is_regular_file() && is_source(e.path())) found.push_back(e.path().string());
      }
      std::sort(found.begin(), found.end());
      for (std::string& f : found) out.push_back(Source{std::move(f), false});
    } else {
      out.push_back(Source{p, !fs::is_regular_file(p, ec)});
    }
  }
  return out;
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Syntax-checks one source as `taskring orch` would compile it.
Entry check_one(const CheckRequest& req, const std::string& file) {
  std::string cmd = quote(req.compiler) + " -std=c++20 -fsyntax-only -I" + quote(req.include_dir) + " -I" +
                    quote(fs::path(file).parent_path().empty() ? "." : fs::path(file).parent_path().string());
  for (const std::string& d : req.defines) cmd += " " + quote("-D" + d);
  cmd += " " + quote(file) + " 2>&1";
  Entry e{file, false, "", ""};
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) {
    e.error = "cannot run the compiler: " + req.compiler;
    return e;
  }
  std::string output;
  char buf[4096];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof(buf), p)) > 0) output.append(buf, got);
  const int rc = ::pclose(p);
  if (rc == 0) {
    e.ok = true;
    return e;
  }
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find("error:") != std::string::npos) {
      e.error = line;
      break;
    }
  }
  if (e.error.empty()) e.error = "compiler exit status " + std::to_string(rc) + " without an error line";
  e.hint = hint_for_error(e.error);
  return e;
}

}  // namespace

int run_check(const CheckRequest& req) {
  std::vector<Entry> entries;
  for (const Source& s : collect(req.paths)) {
    entries.push_back(s.missing ? Entry{s.path, false, "no such file or folder", ""} : check_one(req, s.path));
  }
  const auto ok = static_cast<size_t>(std::count_if(entries.begin(), entries.end(), [](const Entry& e) { return e.ok; }));
  const int status = entries.empty() ? 2 : ok == entries.size() ? 0 : 1;
  if (req.json) {
    nlohmann::json j;
    j["ok"] = status == 0;
    j["compiled"] = ok;
    j["total"] = entries.size();
    j["files"] = nlohmann::json::array();
    for (const Entry& e : entries) {
      nlohmann::json f = {{"file", e.file}, {"ok", e.ok}};
      if (!e.ok) f["error"] = e.error;
      if (!e.hint.empty()) f["hint"] = e.hint;
      j["files"].push_back(f);
    }
    std::cout << j.dump(2) << "\n";
    return status;
  }
  if (status == 2) {
    std::cerr << "taskring orch --check: no orchestration source (.cpp, .cc, .cxx) under the given paths\n";
    return status;
  }
  for (const Entry& e : entries) {
    if (e.ok) {
      std::cout << "ok     " << e.file << "\n";
      continue;
    }
    std::cout << "error  " << e.file << "  " << e.error;
    if (!e.hint.empty()) std::cout << "  -- hint: " << e.hint;
    std::cout << "\n";
  }
  std::cout << ok << " of " << entries.size() << " compile\n";
  return status;
}

}  // namespace taskring::cli::orch
