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
using taskring::ScopeGuard;
using taskring::ScopeMode;
using taskring::TaskDomain;
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

// ---- Newer upstream spellings (after 6ebaf7715; docs/compat.md, "renames").
// Both spellings name the same taskring items, so a source may mix them.
using TaskId = taskring::PTO2TaskId;

// The tensor descriptor per runtime namespace, as upstream spells it after
// splitting the L2 tensor by runtime. taskring has one descriptor for both
// runtimes, so the two names are the same type; there is no global alias.
namespace simpler::tmr {
using Tensor = ::taskring::ChipTensor;
using ::taskring::make_tensor_external;
}  // namespace simpler::tmr
namespace simpler::hbg {
using Tensor = ::taskring::ChipTensor;
using ::taskring::make_tensor_external;
}  // namespace simpler::hbg

// Upstream's SIMPLER_ERROR_* are macros with these values. Code 4 is named
// after the fanin capacity there; taskring raises it when a ring's dependency
// pool is exhausted and reports it as DEP_POOL_OVERFLOW (the 6ebaf7715 name).
// Code 6 was retired upstream and has no SIMPLER_ spelling.
#define SIMPLER_ERROR_NONE 0
#define SIMPLER_ERROR_SCOPE_DEADLOCK 1
#define SIMPLER_ERROR_HEAP_RING_DEADLOCK 2
#define SIMPLER_ERROR_FLOW_CONTROL_DEADLOCK 3
#define SIMPLER_ERROR_FANIN_CAPACITY_EXCEEDED 4
#define SIMPLER_ERROR_INVALID_ARGS 5
#define SIMPLER_ERROR_REQUIRE_SYNC_START_INVALID 7
#define SIMPLER_ERROR_TENSOR_WAIT_TIMEOUT 8
#define SIMPLER_ERROR_EXPLICIT_ORCH_FATAL 9
#define SIMPLER_ERROR_SCOPE_TASKS_OVERFLOW 10
#define SIMPLER_ERROR_TENSORMAP_OVERFLOW 11
#define SIMPLER_ERROR_SCHEDULER_TIMEOUT 100
#define SIMPLER_ERROR_ASYNC_COMPLETION_INVALID 101
#define SIMPLER_ERROR_ASYNC_WAIT_OVERFLOW 102
#define SIMPLER_ERROR_ASYNC_REGISTRATION_FAILED 103
#define SIMPLER_ERROR_READY_QUEUE_OVERFLOW 104  // never raised by taskring (no bounded ready queue)
static_assert(SIMPLER_ERROR_FANIN_CAPACITY_EXCEEDED == taskring::PTO2_ERROR_DEP_POOL_OVERFLOW &&
                  SIMPLER_ERROR_INVALID_ARGS == taskring::PTO2_ERROR_INVALID_ARGS &&
                  SIMPLER_ERROR_EXPLICIT_ORCH_FATAL == taskring::PTO2_ERROR_EXPLICIT_ORCH_FATAL &&
                  SIMPLER_ERROR_TENSORMAP_OVERFLOW == taskring::PTO2_ERROR_TENSORMAP_OVERFLOW &&
                  SIMPLER_ERROR_ASYNC_REGISTRATION_FAILED == taskring::PTO2_ERROR_ASYNC_REGISTRATION_FAILED,
              "SIMPLER_ERROR_* keep upstream's values");

// Upstream's a5 tensormap_and_ringbuffer runtime header guard, which sources
// test to pick `set_core_num` over `set_block_num`; defined exactly when the
// launch spec has only the a5 tmr spelling (taskring/tensor/task_args.hpp).
#if defined(TASKRING_LAUNCH_SPEC_CORE_NUM_ONLY_) && !defined(SRC_A5_RUNTIME_TENSORMAP_AND_RINGBUFFER_RUNTIME_PTO_TYPES_H_)
#define SRC_A5_RUNTIME_TENSORMAP_AND_RINGBUFFER_RUNTIME_PTO_TYPES_H_
#endif

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
