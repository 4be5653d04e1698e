// What a Python ChipWorker shares with its device buffers and its argument
// conversion: the C++ worker behind a mutex, registered callables, buffers.
//
// Lifetimes: a _ChipWorker owns the WorkerState; a _DeviceBuffer holds a
// weak reference, so a buffer that outlives its worker (or is used after
// free) raises instead of touching freed device memory.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "callables.hpp"
#include "taskring/chip/chip_worker.hpp"

namespace taskring::py {

struct WorkerState {
  std::unique_ptr<ChipWorker> worker;
  std::mutex mu;  // one run / memory call at a time
  // Registered callables by identity; the shared_ptr pins the address.
  std::vector<std::pair<std::shared_ptr<PyCallable>, int>> callables;
  // Per-run scratch, reused under `mu` so a run allocates nothing here.
  std::vector<ChipTensor> tensors = std::vector<ChipTensor>(ChipTaskArgs::kTensorCapacity);
  std::string runtime, device;
  uint64_t last_native_ns = 0;  // ChipWorker::run alone, in the last run() (bench/python)
};

struct BufferState {
  uint64_t addr = 0;
  uint64_t size = 0;
  bool freed = false;
};

struct PyDeviceBuffer {
  std::weak_ptr<WorkerState> owner;
  std::shared_ptr<BufferState> state;
  std::string tag;
};

// A tensor argument with an explicit view (or over a device buffer).
struct PyTensor {
  pybind11::object data;  // numpy array or _DeviceBuffer
  int tag = 0;
  std::optional<int> dtype;
  std::optional<std::vector<uint32_t>> shape, strides;
  uint64_t offset = 0;
};

// A tensor that Orchestrator.alloc placed in a node's heap ring. It is a task
// argument of the run that allocated it only: its memory is reclaimed once
// that run's consumers finished and its scope ended. `run` is that run's
// token (compared by identity, so it still identifies an ended run).
struct PyHeapTensor {
  ChipTensor tensor;
  std::weak_ptr<void> run;
};

// Chip memory from Orchestrator.alloc_child_tensor: an address in one chip
// child's process, valid until freed or the node closes. The state is shared
// by every copy of the Python object, so a free is seen by all.
struct ChildBufferState {
  int chip = -1;
  uint64_t addr = 0;
  uint64_t bytes = 0;
  bool freed = false;
};
struct PyChildBuffer {
  std::shared_ptr<ChildBufferState> state;
  std::vector<uint32_t> shape;
  int dtype = 0;
  std::weak_ptr<void> node;  // the node's state, by identity
};

// What the arguments of a node task may name besides shared arrays (see
// bind_run_args): the run's Orchestrator.alloc tensors and the chip buffers
// of the chip that runs the task, of this node.
struct NodeArgContext {
  std::shared_ptr<void> run;   // the run's token
  std::shared_ptr<void> node;  // the node's state
  int chip = -1;               // the chip running the task; -1: a SUB task
};

// Whether two tokens are the same object (also once one has expired).
inline bool same_token(const std::weak_ptr<void>& a, const std::shared_ptr<void>& b) {
  return !a.owner_before(b) && !b.owner_before(a);
}

// The live state of `b`, checked to belong to `st` and not to be freed.
// Raises FAILED_PRECONDITION (freed, worker closed) or INVALID_ARGUMENT
// (another worker's buffer); `op` names the caller.
BufferState& check_buffer(WorkerState& st, const PyDeviceBuffer& b, const std::string& op);

// "0x..." for messages.
std::string hex(uint64_t v);

}  // namespace taskring::py
