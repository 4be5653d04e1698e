// Newer upstream name of the orchestration header. Same API as
// pto_orchestration_api.h, including the `OrchestrationConfig` alias of
// PTO2OrchestrationConfig.
#pragma once

#include "pto_orchestration_api.h"
