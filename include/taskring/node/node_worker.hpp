// NodeWorker: the L3 node. One host process drives N sim chips and M SUB
// workers, each a forked child process with a shared-memory mailbox.
//
//   NodeConfig cfg; cfg.chips = 4; cfg.sub_workers = 1;
//   NodeWorker w(cfg);
//   int mm = *w.register_chip(bgemm_callable);          // before init()
//   int sum = *w.register_sub("sum", sum_fn);           // before init()
//   TASKRING_RETURN_IF_ERROR(w.init());                 // forks, waits for READY
//   float* x = static_cast<float*>(*w.alloc_shared(bytes));  // shared heap
//   Status s = w.run([&](Orchestrator& o) { ... o.submit_next_level(mm, args, 0); ... });
//   w.close();                                          // also from ~NodeWorker
//
// Fork before threads: init() forks every child before it starts any thread
// (its scheduler thread starts after the last fork) and fails with
// FAILED_PRECONDITION when the calling process already runs more than one
// thread, because a fork copies only the calling thread and a child would
// inherit locks held by the others. The shared heap and every mailbox are
// anonymous shared mappings made before the forks, so a host tensor has the
// same address in every process and no /dev/shm name exists to leak.
//
// Runs: submit() runs the orchestration function on the calling thread (its
// tasks start as soon as they are ready, while it still submits) and returns
// a RunHandle for the run's completion. Runs do not overlap: submit() first
// waits for the previous run. The first error of a run wins; an error from
// the orchestration function cancels the run's unstarted tasks; either way
// the worker stays usable. A child that dies fails its task (and every
// later task sent to it) with an error naming the child, its pid and the
// signal. Children exit when the parent dies (PR_SET_PDEATHSIG plus a parent
// check on every idle wake).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "taskring/base/clock.hpp"
#include "taskring/base/expected.hpp"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/node/chip_run_totals.hpp"
#include "taskring/node/node_config.hpp"
#include "taskring/node/orchestrator.hpp"
#include "taskring/node/run_types.hpp"

namespace taskring::node {

class NodeWorker {
 public:
  explicit NodeWorker(NodeConfig config);
  ~NodeWorker();  // close(), errors ignored
  NodeWorker(const NodeWorker&) = delete;
  NodeWorker& operator=(const NodeWorker&) = delete;

  // Registers a chip callable (every chip installs it before READY); returns
  // its id. Only before init(): FAILED_PRECONDITION after.
  Expected<int> register_chip(const ChipCallable& callable);
  // Registers a SUB callable under a unique non-empty name; returns its id.
  // Only before init().
  Expected<int> register_sub(const std::string& name, SubFunction fn);
  // The id of a registered SUB callable; NOT_FOUND otherwise.
  Expected<int> sub_id(const std::string& name) const;

  // Validates the config, maps the shared heap and the mailboxes, forks every
  // child and waits until all report INIT_READY within
  // config.startup_timeout_ms. On any failure every child is rolled back
  // (SHUTDOWN, SIGTERM, SIGKILL of its process group, reap) and the error
  // names the child (kind, index, pid) and its message or signal. Once only:
  // a worker whose init() failed can only be closed.
  Status init();

  // Shared host memory for tensors that live across runs (64-aligned,
  // zeroed, freed at close()), visible to every child at the same address.
  // After a successful init() only (FAILED_PRECONDITION before);
  // RESOURCE_EXHAUSTED naming NodeConfig::shared_bytes when full.
  Expected<void*> alloc_shared(uint64_t bytes);

  // Runs `orch` now on this thread and returns the run's handle. Errors of
  // the function itself and of its tasks arrive through the handle.
  // FAILED_PRECONDITION at once (through the handle) when called from
  // inside one of this worker's orchestration functions (runs do not nest)
  // or from a forked copy of the process that initialised the worker (the
  // children, mailboxes and engine thread belong to that process).
  RunHandle submit(OrchFunction orch, SubmitOptions options = {});
  // submit(orch, {.caller_waits = true}).wait(deadline).
  Status run(OrchFunction orch, Deadline deadline = Deadline::after_ms(600000));

  // Cancels unstarted work, drains running tasks (close_timeout_ms), shuts
  // the children down (SHUTDOWN, then SIGTERM, then SIGKILL, reap). Every
  // pending RunHandle resolves. Idempotent; a failed close may be retried.
  // In a forked copy of the owner it does nothing (OK): the children are
  // the owner's. From inside an orchestration function: FAILED_PRECONDITION.
  Status close();
  // close() without the drain: every child is SIGKILLed first, so running
  // tasks (a SUB that never returns) end at once and the pending run fails.
  // For an interrupt (Ctrl-C in Python's NodeWorker.run).
  Status close_now();

  // One round trip through chip `chip`'s control frame; the child holds the
  // frame `hold_ns` first. When `started` is given (it must lie in the
  // shared heap) the child stores 1 there once it holds the frame. For
  // health probes, the mailbox benchmark and the dies-mid-control test.
  Status ping_chip(int chip, uint64_t hold_ns = 0, std::atomic<uint32_t>* started = nullptr);

  // The totals of chip `chip`'s runs since the last call (or init), and
  // clears them. Call between runs (no run in flight): a chip writes them
  // when it finishes a task. OUT_OF_RANGE for a bad chip index,
  // FAILED_PRECONDITION when the worker is not running.
  Expected<ChipRunTotals> take_chip_run_totals(int chip);

  const NodeConfig& config() const;
  // Comm domains allocated and not yet swept (each run's fence sweeps its
  // own). For tests and tools.
  int live_domains() const;
  // Swept comm domains kept mapped for reuse (NodeConfig::domain_cache).
  // For tests and tools.
  int cached_domains() const;
  // The pid of chip `i` / SUB `i`; -1 when not running. For tests and tools.
  int chip_pid(int i) const;
  int sub_pid(int i) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace taskring::node
