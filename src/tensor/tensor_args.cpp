// The tensor argument containers are header-only (an orchestration library
// links nothing from taskring); this unit checks that the headers stand alone.
#include "taskring/tensor/task_args.hpp"
#include "taskring/tensor/tensor_create_info.hpp"
