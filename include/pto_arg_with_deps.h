// Upstream's header for CoreTaskArgsWithDeps: argument containers that
// collect explicit dependencies one add_dep() at a time. In taskring the
// class is part of the orchestration API, so this header only forwards.
#pragma once

#include "pto_orchestration_api.h"
