#include "options.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>

namespace peers {

Options parse_options(int argc, char** argv, const char* description, const std::vector<std::string>& rows) {
  Options o;
  std::string patterns = "chain,independent,mix8,fanout";
  CLI::App app{description};
  app.add_option("--tasks", o.tasks, "tasks per pattern")->check(CLI::Range(std::size_t{16}, std::size_t{1} << 30));
  app.add_option("--reps", o.reps, "timed repetitions per pattern")->check(CLI::Range(1, 1000));
  app.add_option("--warmup", o.warmup, "untimed repetitions first")->check(CLI::Range(0, 1000));
  app.add_option("--pattern", patterns, "comma-separated: chain,independent,mix8,fanout");
  app.add_option("--threads", o.threads, "worker threads, 0 = hardware threads")->check(CLI::Range(0, 1024));
  app.add_option("--rows", o.rows, "comma-separated rows to run, by runtime name (default all)")->delimiter(',');
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  std::stringstream ss(patterns);
  for (std::string item; std::getline(ss, item, ',');) {
    auto p = parse_pattern(item);
    if (!p) {
      std::fprintf(stderr, "--pattern: unknown pattern '%s' (chain, independent, mix8, fanout)\n", item.c_str());
      std::exit(2);
    }
    o.patterns.push_back(*p);
  }
  for (const std::string& r : o.rows) {
    if (std::find(rows.begin(), rows.end(), r) == rows.end()) {
      std::string known;
      for (const std::string& k : rows) known += (known.empty() ? "" : ", ") + k;
      std::fprintf(stderr, "--rows: unknown row '%s' (this binary's rows: %s)\n", r.c_str(), known.c_str());
      std::exit(2);
    }
  }
  if (o.threads == 0) o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return o;
}

bool Options::wants_row(const std::string& runtime) const {
  return rows.empty() || std::find(rows.begin(), rows.end(), runtime) != rows.end();
}

}  // namespace peers
