// Upstream-compatible entry header for orchestration sources: an orchestration
// written against upstream's `pto_orchestration_api.h` compiles unchanged with
// taskring's include path. The names are taskring's, brought into the global
// namespace as upstream spells them. docs/compat.md lists every upstream item
// and where taskring's behaviour deliberately differs.
//
// Define TASKRING_ORCH_ARCH_A2A3 or TASKRING_ORCH_ARCH_A5 to keep only that
// architecture's launch_spec spelling (set_block_num / set_core_num).
#pragma once

#include "taskring/chip/orchestration_api.hpp"

using taskring::AddressSpace;
using taskring::alloc_tensors;
using taskring::CHIP_MAX_SCALAR_ARGS;
using taskring::CHIP_MAX_TENSOR_ARGS;
using taskring::ChipTaskArgs;
using taskring::ChipTensor;
using taskring::CORE_MAX_SCALAR_ARGS;
using taskring::CORE_MAX_TENSOR_ARGS;
using taskring::CorePredicateOperand;
using taskring::CoreTaskArgs;
using taskring::CoreTaskArgsWithDeps;
using taskring::CoreTaskPredicate;
using taskring::DataType;
using taskring::DEP_RETAIN;
using taskring::DEP_WAIT;
using taskring::DepFlags;
using taskring::from_u64;
using taskring::get_dtype_name;
using taskring::get_element_size;
using taskring::get_tensor_data;
using taskring::GRAPH_MAX_DEFINITIONS;
using taskring::GRAPH_MAX_NODES;
using taskring::GRAPH_MAX_SCALAR_ARGS;
using taskring::GRAPH_MAX_TENSOR_ARGS;
using taskring::GraphFunction;
using taskring::GraphKey;
using taskring::GraphSubmitResult;
using taskring::GraphTaskArgs;
using taskring::INVALID_KERNEL_ID;
using taskring::LaunchSpec;
using taskring::make_tensor_external;
using taskring::MAX_TENSOR_DIMS;
using taskring::MixedKernels;
using taskring::NUM_TASK_TIMING_SLOTS;
using taskring::OrchestrationConfig;
using taskring::PredicateOp;
using taskring::PTO2_ERROR_ASYNC_COMPLETION_INVALID;
using taskring::PTO2_ERROR_ASYNC_REGISTRATION_FAILED;
using taskring::PTO2_ERROR_ASYNC_WAIT_OVERFLOW;
using taskring::PTO2_ERROR_DEP_POOL_OVERFLOW;
using taskring::PTO2_ERROR_DEPENDENCY_OVERFLOW;
using taskring::PTO2_ERROR_EXPLICIT_ORCH_FATAL;
using taskring::PTO2_ERROR_FLOW_CONTROL_DEADLOCK;
using taskring::PTO2_ERROR_HEAP_RING_DEADLOCK;
using taskring::PTO2_ERROR_INVALID_ARGS;
using taskring::PTO2_ERROR_NONE;
using taskring::PTO2_ERROR_REQUIRE_SYNC_START_INVALID;
using taskring::PTO2_ERROR_SCHEDULER_TIMEOUT;
using taskring::PTO2_ERROR_SCOPE_DEADLOCK;
using taskring::PTO2_ERROR_SCOPE_TASKS_OVERFLOW;
using taskring::PTO2_ERROR_TENSOR_WAIT_TIMEOUT;
using taskring::PTO2_ERROR_TENSORMAP_OVERFLOW;
using taskring::PTO2LaunchSpec;
using taskring::PTO2OrchestrationConfig;
using taskring::PTO2ScopeGuard;
using taskring::PTO2ScopeMode;
using taskring::PTO2TaskId;
using taskring::rt_available_aiv_count;
using taskring::rt_available_cluster_count;
using taskring::rt_is_fatal;
using taskring::rt_report_fatal;
using taskring::rt_scope_begin;
using taskring::rt_scope_end;
using taskring::rt_submit_aic_task;
using taskring::rt_submit_aiv_task;
using taskring::rt_submit_dummy_task;
using taskring::rt_submit_graph;
using taskring::rt_submit_task;
using taskring::set_tensor_data;
using taskring::TASK_TIMING_SLOT_NONE;
using taskring::TaskOutputTensors;
using taskring::TaskSubmitResult;
using taskring::TensorArgType;
using taskring::TensorCreateInfo;
using taskring::TensorRef;
using taskring::to_u64;

// Upstream's assertion and spin hint, for orchestration sources that use
// them. always_assert(cond): a false condition fails the run with
// EXPLICIT_ORCH_FATAL (9) naming the condition and its place, where upstream
// aborts the process (taskring's errors are values; docs/compat.md); the
// orchestration continues, and every later rt_* call is a no-op.
#ifndef always_assert
#define always_assert(cond)                                                                            \
  do {                                                                                                 \
    if (!(cond)) {                                                                                     \
      ::taskring::rt_report_fatal(PTO2_ERROR_EXPLICIT_ORCH_FATAL, "always_assert(%s) failed at %s:%d", \
                                  #cond, __FILE__, __LINE__);                                          \
    }                                                                                                  \
  } while (0)
#endif
// SPIN_WAIT_HINT(): inside a polling loop, lets other threads of the host run
// (sim's cores share the host's hardware threads).
#ifndef SPIN_WAIT_HINT
#include <sched.h>
#define SPIN_WAIT_HINT() ((void)sched_yield())
#endif
