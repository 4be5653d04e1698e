// The CPU's model name from /proc/cpuinfo, for the machine line of a
// benchmark's report ("unknown" where it cannot be read).
#pragma once

#include <fstream>
#include <string>

namespace taskring::bench {

inline std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

}  // namespace taskring::bench
