// The three load averages of /proc/loadavg ("0.41 1.42 3.38"), printed
// beside every benchmark's numbers: a figure from a loaded machine is read
// differently.
#pragma once

#include <fstream>
#include <string>

namespace taskring::bench {

// Empty fields when /proc/loadavg cannot be read.
inline std::string loadavg() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

}  // namespace taskring::bench
