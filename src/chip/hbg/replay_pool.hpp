// ReplayPool: the execution states of one Graph Definition's replays, built
// once and reused by every later replay of that Definition (in this run and
// the next ones), so a replay walks memory that is already laid out and,
// when replays follow one another, already in cache.
//
// A state (GraphExec) is one block: a Runnable per node whose static fields
// (kernels, shape, argument pointers, fanout) are set when the state is
// made, the ready counters of the nodes in one contiguous array, the bound
// tensor arguments (templates copied once; a replay rewrites only what its
// boundary and its heap decide, from per-source lists made once) and the
// scalars. A replay takes a free state (acquire), resets the counters with
// one copy of the initial counts (begin_replay), and gives the state back
// when its last node completes (release). A state remembers the boundary
// tensors and the heap base it was last bound to: a replay with the same
// ones (byte for byte) finds its arguments already bound. Replays that overlap take different states; a pool grows to
// the largest overlap it has seen and keeps its states until it is
// destroyed. No allocation once a pool has enough states, no hashing, no
// per-node setup per replay.
//
// A pool is made from a Definition image that has passed
// verify_definition(); it keeps a pointer to that image (the Definition's
// device copy, which lives as long as the Definition).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graph/definition.hpp"
#include "run_mode.hpp"
#include "run_state.hpp"
#include "taskring/base/status.hpp"
#include "taskring/kernels/kernel_abi.h"

namespace taskring::hbg {

// A Definition's checks, run once per run per Definition (the run's kernel
// table is fixed, so its kernel ids are checked once, not per node per
// replay): its layout, its content hash, and every kernel id registered.
Status verify_definition(const graph::DefinitionView& def, uint64_t definition_bytes,
                         const taskring_kernel_fn* kernels);

class ReplayPool {
 public:
  explicit ReplayPool(const graph::DefinitionView& def);
  ReplayPool(const ReplayPool&) = delete;
  ReplayPool& operator=(const ReplayPool&) = delete;

  const graph::DefinitionView& definition() const { return def_; }
  // True when every node is one block or a require_sync_start task: a single
  // executor can then run the replay as a plain loop in node order (node
  // order is a topological order: every fanin is an earlier node).
  bool loopable() const { return loopable_; }

  // With several executors, which way a replay of a loopable Definition
  // goes: as a loop on the executor that starts it, or spread over the
  // executors. Chosen as a chip chooses inline or threaded runs
  // (RunModePicker, src/chip/run_mode.hpp; "inline" is the loop): replay 0
  // spread (a kernel that waits on a sibling pins the Definition there),
  // then loops, one spread probe at replay 8 timed against the loop before
  // it, the loop kept unless the spread replay took under 80 % of its
  // time, the other way tried every 64th replay. Spread over two executors
  // on 2 vCPUs, each node's hand-off crossed CPUs: a replayed node of the
  // 1024-node DAG cost 78-98 ns against 22-34 as a loop (bench_graph).
  // Thread-safe. `timed`: whether the replay's time matters (RunModePicker::needs_time).
  bool next_loop(bool* timed);
  // The outcome of a replay next_loop() chose: its way, its time (when
  // timed), and whether a kernel waited on a sibling meanwhile.
  void record_replay(bool loop, uint64_t ns, bool timed, bool waited);

  // A free state (made when none is free); nullptr only when memory is
  // exhausted. Thread-safe.
  GraphExec* acquire();
  // Gives `exec` back. Thread-safe. Read what you need from it first.
  void release(GraphExec* exec);
  // Marks every state free: between runs, when no replay is in flight (a run
  // that ended on a fatal error may not have released its states).
  void reset_between_runs();
  size_t state_count() const { return states_.size(); }

  // Starts a replay on `exec`: resets its ready counters and multi-block
  // claims, and binds its tensor arguments and scalars from the submission's
  // boundary and the replay heap at `heap_base`. Returns what is out of
  // range, or nullptr.
  const char* begin_replay(GraphExec* exec, Runnable* outer, const ChipTensor* btensors, const uint64_t* bscalars,
                           uint64_t heap_base) const;

 private:
  struct Block {
    void operator()(uint8_t* p) const;
  };
  // How a replay rewrites one tensor argument `arg`, by source kind.
  struct InternalArg {
    uint32_t arg;
    uint64_t offset;  // in the replay heap
  };
  struct ViewArg {
    uint32_t arg, boundary;
    int64_t offset;         // bytes after the boundary tensor's first element
    uint32_t shift;         // log2 of the element size (a power of two, checked when made)
    uint64_t extent_bytes;  // bytes the view spans from its first element
  };
  struct ExactArg {
    uint32_t arg, boundary;
    uint8_t tag;  // the node's tag (sanitize/arg_tag.hpp)
  };
  GraphExec* make_state();
  const char* bind_tensors(GraphExec* exec, const ChipTensor* btensors, uint64_t heap_base) const;

  graph::DefinitionView def_;
  bool loopable_ = true;
  int32_t sinks_ = 0;
  std::vector<int32_t> initial_pending_;  // fanin count per node
  std::vector<uint32_t> multi_block_;     // nodes whose blocks are claimed (next_block, blocks_done)
  std::vector<uint32_t> boundary_scalars_;  // scalar args sourced from the boundary
  std::vector<InternalArg> internal_args_;
  std::vector<ViewArg> view_args_;
  std::vector<ExactArg> exact_args_;
  const char* static_error_ = nullptr;  // an argument no replay can bind
  std::mutex mu_;
  std::mutex mode_mu_;  // guards mode_
  RunModePicker mode_;
  std::vector<std::unique_ptr<uint8_t, Block>> states_;
  std::vector<GraphExec*> free_;
};

}  // namespace taskring::hbg
