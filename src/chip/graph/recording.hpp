// Recording: turns the submits of one Graph body run into RecordedNodes.
//
// The body runs against a private copy of the boundary. Node outputs get
// addresses in a private virtual range (kRecordVirtualBase + offset, 1024-B
// aligned, never a device address) and synthetic owner ids (ring
// kRecordRing, local = node index), so nothing touches the run's heap, task
// window or TensorMap. Dependencies come from the same rules as the
// ordinary path, applied to the body alone: creator edges, a private
// BuildTracker (RAW/WAW/WAR) outside MANUAL scopes, and explicit dependencies
// between nodes. Edges to tasks before the body are the outer GRAPH task's
// business (its boundary).
//
// Tensor sources, in order: identical to boundary tensor i (kBoundaryExact),
// a view of the buffer of boundary tensor i (kBoundaryView, i = the first
// boundary tensor with that buffer), inside the virtual range (kInternal:
// the node whose window holds it). Anything else cannot be classified.
// A node scalar equal to boundary scalar i at record time is sourced from
// boundary scalar i (first match); other scalars are baked.
//
// The first unrecordable construct latches `error()`; the body then keeps
// running with recording disabled for later calls (they return empty).
//
// A Recording is reusable: begin() starts the next one and keeps every
// array's capacity (nodes, arguments, producers, outputs, the tracker's
// arena), so a runtime that keeps one Recording allocates per recording
// only what outgrows the previous ones, never per node.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "definition.hpp"
#include "deps/build_tracker.hpp"
#include "taskring/chip/orchestration_api.hpp"

namespace taskring::graph {

inline constexpr uint64_t kRecordVirtualBase = 1ull << 62;
inline constexpr uint32_t kRecordRing = 15;

class Recording {
 public:
  Recording();
  // Copies the boundary (tensors and scalars) into the recording.
  Recording(std::string body_name, uint64_t full_key, const GraphTaskArgs& boundary);
  // Starts a new recording (as the constructor does), reusing the storage.
  void begin(std::string body_name, uint64_t full_key, const GraphTaskArgs& boundary);

  const std::string& body() const { return body_; }
  uint64_t full_key() const { return full_key_; }
  const GraphTaskArgs& boundary() const { return bargs_; }

  // Records one submit (dummy: no kernels; alloc: OUTPUTs only). `op` names
  // the call for messages. Arguments are already validated by the caller.
  TaskOutputTensors record(const char* op, const MixedKernels& kernels, uint8_t shape, bool dummy,
                           const CoreTaskArgs& args);
  void scope_begin(PTO2ScopeMode mode);
  void scope_end();
  // Latches an unrecordable construct.
  void fail(const std::string& construct);

  // After the body: checks scopes and boundary scalars against `original`,
  // then builds the Definition.
  Status finish(const GraphTaskArgs& original, AlignedBuffer* out,
                uint64_t (*storage_bytes_for)(uint32_t, uint32_t, uint32_t));

  bool failed() const { return !error_.empty(); }
  // A node depends explicitly on a task outside the body: the body is valid
  // but cannot become a Definition (the outside task differs per call), so
  // the caller runs it as ordinary tasks (failed() is true too).
  bool needs_outside_task() const { return outside_dependency_; }
  const std::string& error() const { return error_; }
  size_t node_count() const { return g_.nodes.size(); }

 private:
  bool classify(const ChipTensor& t, int node, int arg, TensorSourceRef* src);
  void note_view_range(int boundary, const ChipTensor& view);
  void add_producer(RecordedNode& n, uint32_t p);
  ChipTensor* new_output(const ChipTensor& t);

  std::string body_;
  bool outside_dependency_ = false;
  uint64_t full_key_;
  std::vector<ChipTensor> btensors_;
  GraphTaskArgs bargs_;
  std::vector<BoundarySignature> signature_;
  std::vector<int16_t> scalar_partition_;
  RecordedGraph g_;
  // OUTPUT tensors handed to the body (TaskOutputTensors points at them):
  // fixed-size chunks, so they never move; kept across recordings.
  static constexpr size_t kOutputChunk = 64;
  std::vector<std::unique_ptr<ChipTensor[]>> output_chunks_;
  size_t outputs_ = 0;
  deps::BuildTracker map_;
  uint64_t vtop_ = 0;
  std::vector<bool> scopes_;  // manual flag per open body scope
  std::string error_;
};

}  // namespace taskring::graph
