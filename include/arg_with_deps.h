// Newer upstream name of pto_arg_with_deps.h (CoreTaskArgsWithDeps). In
// taskring the class is part of the orchestration API, so this header only
// forwards.
#pragma once

#include "pto_orchestration_api.h"
