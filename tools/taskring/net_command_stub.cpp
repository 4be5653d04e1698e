// Built instead of net_command.cpp where CMake found no MPI: --nodes is
// refused with a clear message.
#include <cstdio>

#include "commands.hpp"

namespace taskring::cli {
namespace {
int no_mpi() {
  std::fprintf(stderr,
               "taskring: --nodes needs L4, and this taskring was built without MPI (install Open MPI: "
               "scripts/bootstrap, then rebuild)\n");
  return 2;
}
}  // namespace

int run_net_rounds(workloads::NodeWorkload&, const std::string&, int, int, int) { return no_mpi(); }
int run_net_bench(const NodeBenchOptions&) { return no_mpi(); }

}  // namespace taskring::cli
