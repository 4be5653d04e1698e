// The rank mpirun gave this process, read from the launcher's environment
// before MPI starts (the node forks its children before MPI_Init, and their
// spans need a global rank).
#pragma once

#include "taskring/base/expected.hpp"
#include "taskring/base/knobs.hpp"

namespace taskring::net {

// The variables tried, in order: Open MPI's, then PMIx's.
inline constexpr const char* kLauncherRankVars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK"};

// The first of kLauncherRankVars that is set, parsed as an integer in
// [0, 2^31-1]; 0 when none is set (not under mpirun). A set variable that
// does not parse is INVALID_ARGUMENT naming the variable and its text.
// `used` (may be null) receives the variable read, or "" for none.
Expected<int> read_launcher_rank(const EnvLookup& env, const char** used = nullptr);

}  // namespace taskring::net
