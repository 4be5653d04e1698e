#include "commands.hpp"
#include <cstdio>
namespace taskring::cli {
// Placeholder until the foundation helper lands `taskring info`.
void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "version, build type, sim topology, knobs in effect");
  cmd->callback([] { std::printf("taskring %s (%s)\n", TASKRING_VERSION, TASKRING_BUILD_TYPE); });
}
}  // namespace taskring::cli
