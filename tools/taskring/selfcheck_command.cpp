#include "commands.hpp"
namespace taskring::cli {
// Placeholder until the sim device lands.
void add_selfcheck_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("selfcheck", "sim device self-check");
  cmd->callback([] { set_exit_code(1); });
}
}  // namespace taskring::cli
