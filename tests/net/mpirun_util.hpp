// Runs a command under `mpirun --oversubscribe -np N` on this machine with
// a hard bound (`timeout -k 5`), capturing stdout+stderr and the wall time.
// --allow-run-as-root: CI runs as root, and Open MPI refuses root without it.
// btl_vader_single_copy_mechanism=none: containers often forbid the CMA
// (ptrace) single-copy path; the copy-in/copy-out path works everywhere.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace taskring::testing {

struct MpiResult {
  int rc = -1;      // exit status; 124 when the bound killed it
  std::string out;  // stdout and stderr, interleaved
  double seconds = 0;
};

// Runs `command` through the shell, bounded by `timeout -k 5 bound_s`.
inline MpiResult run_bounded(const std::string& command, int bound_s) {
  char dir[] = "/tmp/taskring_mpirun_XXXXXX";
  MpiResult r;
  if (mkdtemp(dir) == nullptr) return r;
  const std::string d = dir;
  const std::string cmd = "timeout -k 5 " + std::to_string(bound_s) + " " + command + " > " + d + "/out 2>&1";
  const auto t0 = std::chrono::steady_clock::now();
  const int st = std::system(cmd.c_str());
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream f(d + "/out");
  std::stringstream ss;
  ss << f.rdbuf();
  r.out = ss.str();
  std::system(("rm -rf " + d).c_str());
  return r;
}

// Under ASan: Open MPI's plugins (MCA components it dlopens and unloads at
// MPI_Finalize) leave allocations that LeakSanitizer reports with no usable
// stack ("<unknown module>" frames), so no suppression can name them. They
// are third-party, so the MPI processes run without the leak check; ASan's
// other checks and UBSan stay on, and taskring's own leaks are checked by the
// node suites, which run the same engine without MPI.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr const char* kMpiEnv = "env ASAN_OPTIONS=\"${ASAN_OPTIONS}:detect_leaks=0\" ";
#else
inline constexpr const char* kMpiEnv = "";
#endif

inline MpiResult mpirun(int np, const std::string& command, int bound_s) {
  return run_bounded(std::string(kMpiEnv) + std::string(TASKRING_MPIEXEC) +
                         " --allow-run-as-root --oversubscribe --mca btl_vader_single_copy_mechanism none -np " +
                         std::to_string(np) + " " + command,
                     bound_s);
}

// The "moe digest rank ..." lines of `taskring run moe --digest=1` (and of
// bench_moe_mpi --digest): one per rank, the same every round.
inline std::set<std::string> moe_digests(const std::string& out) {
  std::set<std::string> s;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("moe digest rank ", 0) == 0) s.insert(line);
  return s;
}

}  // namespace taskring::testing
