// Upstream-compatible entry header for orchestration sources: an orchestration
// written against upstream's `pto_orchestration_api.h` compiles unchanged with
// taskring's include path. The names are taskring's, brought into the global
// namespace as upstream spells them.
#pragma once

#include "taskring/chip/orchestration_api.hpp"

using taskring::AddressSpace;
using taskring::alloc_tensors;
using taskring::ChipTaskArgs;
using taskring::ChipTensor;
using taskring::CoreTaskArgs;
using taskring::CoreTaskArgsWithDeps;
using taskring::DataType;
using taskring::DEP_RETAIN;
using taskring::DEP_WAIT;
using taskring::DepFlags;
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
using taskring::make_tensor_external;
using taskring::MixedKernels;
using taskring::PTO2OrchestrationConfig;
using taskring::PTO2ScopeGuard;
using taskring::PTO2ScopeMode;
using taskring::PTO2TaskId;
using taskring::rt_available_aiv_count;
using taskring::rt_available_cluster_count;
using taskring::rt_report_fatal;
using taskring::rt_scope_begin;
using taskring::rt_scope_end;
using taskring::rt_submit_aic_task;
using taskring::rt_submit_aiv_task;
using taskring::rt_submit_dummy_task;
using taskring::rt_submit_graph;
using taskring::rt_submit_task;
using taskring::set_tensor_data;
using taskring::TaskOutputTensors;
using taskring::TensorArgType;
using taskring::TensorCreateInfo;
