// TmrRuntime: the tensormap_and_ringbuffer L2 runtime on the sim device.
//
// Threads (persistent across runs, parked between them):
//   - one orchestrator thread runs the orchestration entry; its rt_* calls
//     land in `submit()` and friends (single-threaded TensorMap, ring heads);
//   - E executor threads (E = min(TASKRING_SIM_THREADS, clusters)) act as the
//     control processor's schedulers *and* the cores: an executor pops a
//     ready task, occupies a core of its own clusters, runs the kernel inline,
//     completes it and releases its consumers, keeping the first newly ready
//     consumer for itself so a dependency chain never crosses threads.
// Idle threads spin briefly and then park (DESIGN.md §4): at most E+1 threads
// are ever runnable and none spins for long. An inline runtime
// (TASKRING_RUN_INLINE) has neither: the caller of start_run orchestrates,
// then executes, and helps execute whenever the orchestration would block.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "deps/tensor_map.hpp"
#include "l2/runtime_base.hpp"
#include "l2/submit_checks.hpp"
#include "l2/submit_kind.hpp"
#include "task_ring.hpp"

namespace taskring::tmr {

class TmrRuntime final : public l2::RuntimeBase<TmrRuntime, TaskSlot> {
 public:
  ~TmrRuntime() override;

  // L2Runtime: hands the entry to the orchestrator thread; an inline runtime
  // runs the whole run here.
  Status start_run(const RunRequest& request) override;

  // ---- orchestration ops (orchestrator thread; l2/runtime_ops.hpp) ----
  TaskOutputTensors submit(const MixedKernels& kernels, const CoreTaskArgs& args, l2::SubmitKind kind);
  void scope_begin(PTO2ScopeMode mode);
  void scope_end();
  bool tensor_access(const ChipTensor& t, uint32_t ndims, const uint32_t* idx, void* data, uint32_t bytes, bool write);

  // ---- executor side (l2/runtime_base.hpp's hooks) ----
  // The consumers on a completed task's fanout list.
  struct Readied {
    DepNode* node = nullptr;
  };
  using Completion = l2::Completion<Readied>;
  // Always its kernels (a dummy: none).
  l2::Started<Readied> start(TaskSlot*, int, l2::LocalReady<TaskSlot>*) { return {}; }
  // Closes `t`'s fanout list (no consumer joins after) and marks it completed.
  Completion complete(TaskSlot* t);
  // The next consumer whose last unfinished producer this was.
  TaskSlot* next_ready(Readied& r);
  // Drops `t`'s references: its retained producers' and its own completion's.
  void retire(TaskSlot* t);
  bool run_complete(uint64_t completed) const;
  // Whether a threaded run's orchestration is still submitting and not
  // waiting on the executors: an idle executor then polls less often
  // (l2::kFeedingPollPauses). A hint, read relaxed.
  bool orchestrator_feeding() const { return orch_feeding_.load(std::memory_order_relaxed); }
  // Live tasks at which scope_end runs what is ready on the orchestrating
  // thread (help_run_ready).
  static constexpr uint64_t kInlineDrainLive = 256;
  std::string task_name(const TaskSlot* t) const;

 private:
  friend class l2::RuntimeBase<TmrRuntime, TaskSlot>;  // create()
  explicit TmrRuntime(const L2RuntimeConfig& config);
  Status init();
  void wake_blocked() override;

  // Clears orch_feeding_ for the scope of an orchestrator's wait on the
  // executors (a full ring, get/set_tensor_data), so they poll at once.
  class NotFeeding {
   public:
    explicit NotFeeding(std::atomic<bool>& feeding)
        : feeding_(feeding), was_(feeding.load(std::memory_order_relaxed)) {
      if (was_) feeding_.store(false, std::memory_order_relaxed);
    }
    ~NotFeeding() {
      if (was_) feeding_.store(true, std::memory_order_relaxed);
    }
    NotFeeding(const NotFeeding&) = delete;
    NotFeeding& operator=(const NotFeeding&) = delete;

   private:
    std::atomic<bool>& feeding_;
    bool was_;
  };

  struct Producer {
    TaskSlot* slot;
    PTO2TaskId id;
    uint8_t flags;
  };
  struct Scope {
    PTO2ScopeMode mode;
    size_t first_task;  // index into scope_tasks_
  };

  // Orchestrator helpers (tmr_submit.cpp, tmr_backpressure.cpp).
  // What allocate() hands a submit: its slot (its argument units set) and
  // its offsets into the ring's heap and dependency pool.
  struct Allocation {
    TaskSlot* slot = nullptr;
    uint64_t heap_off = 0;
    uint64_t pool_off = 0;
  };
  bool allocate(TaskRing& ring, uint64_t heap_bytes, uint64_t dep_nodes, const ArgLayout& args, Allocation* out);
  // Takes `need` units of `pool` (waiting for retirements), or latches the
  // pool's deadlock verdict (`code`, naming `what` and `knob`) and fails.
  bool take_from(TaskRing& ring, BumpRing& pool, uint64_t need, uint64_t* off, int32_t code, const char* what,
                 const char* unit, const char* knob);
  bool wait_for_ring(TaskRing& ring, uint64_t observed_alive, const char* what, const char* knob);
  // The oldest live slot of `ring`, for stall messages.
  std::string stall_diagnostics(TaskRing& ring);
  // The steps of submit(), in order (tmr_submit.cpp; allocate is step 3).
  // Forced inline: they are submit()'s body in named pieces, and as calls
  // they cost ~70 instructions per submit in argument passing and reloads.
  [[gnu::always_inline]] inline bool check(const MixedKernels& kernels, const CoreTaskArgs& args,
                                           l2::SubmitKind kind, l2::TaskShape* shape,
                                           exec::ResolvedPredicate* predicate);
  [[gnu::always_inline]] inline int collect_producers(const CoreTaskArgs& args, bool manual_scope, Producer* producers,
                                                       int* retaining);
  [[gnu::always_inline]] inline void materialize(TaskSlot* t, TaskRing& ring, const Allocation& at,
                                                 const MixedKernels& kernels, const CoreTaskArgs& args,
                                                 l2::SubmitKind kind, l2::TaskShape shape,
                                                 const exec::ResolvedPredicate& predicate, const char* op,
                                                 TaskOutputTensors* result);
  [[gnu::always_inline]] inline void register_accesses(TaskSlot* t, const CoreTaskArgs& args);
  [[gnu::always_inline]] inline int wire(TaskSlot* t, DepNode* nodes, const Producer* producers, int np);
  void add_producer(Producer* list, int* n, TaskSlot* slot, PTO2TaskId id, uint8_t flags);
  TaskSlot* slot_of(PTO2TaskId id);
  void fail_args(const char* what, const std::string& detail);
  void orchestrator_main();
  // One run's orchestration, on the orchestrator thread or (inline) the
  // caller of start_run.
  void orchestrate();
  void finish_orchestration();

  // Retirement (inline, below). release drops a reference; the last one
  // marks the slot consumed and advances its ring. release_deferred marks
  // it only (true when it did): the caller advances the ring with
  // advance_ring after a seq_cst fence, once for many slots.
  void release(TaskSlot* t);
  bool release_deferred(TaskSlot* t);
  void advance_ring(TaskRing& ring);

  TaskRing rings_[kRingLevels];
  void* slot_memory_ = nullptr;  // every ring's task slots
  size_t slot_memory_bytes_ = 0;
  void* dep_memory_ = nullptr;  // every ring's dependency nodes (a mapping of their own)
  size_t dep_memory_bytes_ = 0;
  void* arg_memory_ = nullptr;  // every ring's argument pool (a mapping of its own)
  size_t arg_memory_bytes_ = 0;
  deps::TensorMap tensor_map_;

  // Orchestrator state.
  l2::SubmitPolicy policy_;  // the run's admission rules (start_run)
  std::vector<Scope> scopes_;
  std::vector<TaskSlot*> scope_tasks_;
  uint64_t submitted_ = 0;  // orchestrator only; published via submitted_pub_

  // Run control, on lines of its own: executors read orch_done_,
  // submitted_pub_ and wake_on_completion_ on completions, and the
  // orchestrator state above is written on every submit.
  alignas(64) std::atomic<uint64_t> orch_generation_{0};
  std::atomic<bool> orch_done_{false};
  // A threaded run's orchestration is submitting and not waiting on the
  // executors (orchestrator_feeding); written at its start, its end and
  // around its waits (NotFeeding).
  std::atomic<bool> orch_feeding_{false};
  std::atomic<uint64_t> submitted_pub_{0};
  Waiter orch_start_;
  // The orchestrator parks here for room in a ring (TaskRing::wake_at) or
  // for a task's completion (get/set_tensor_data: wake_on_completion_).
  Waiter ring_progress_;
  std::atomic<bool> wake_on_completion_{false};
  std::thread orchestrator_;
};

// The executor-side hooks, inline: RuntimeBase::finish_task runs them once
// per task (l2/runtime_base.hpp).

inline TmrRuntime::Completion TmrRuntime::complete(TaskSlot* t) {
  t->completed.store(true, std::memory_order_release);  // its map entries are dead (deps/owner.hpp)
  // Takes the consumers and closes the list. seq_cst: this exchange is the
  // completion get/set_tensor_data waits for (the other side of its
  // wake_on_completion_ store). Alone, nobody waits or joins meanwhile.
  if (tasks_here_) {
    DepNode* n = t->fanout.load(std::memory_order_relaxed);
    t->fanout.store(kFanoutClosed, std::memory_order_relaxed);
    return Completion{Readied{n}, true};
  }
  DepNode* n = t->fanout.exchange(kFanoutClosed, std::memory_order_seq_cst);
  if (wake_on_completion_.load(std::memory_order_seq_cst)) ring_progress_.notify_all_ordered();
  return Completion{Readied{n}, true};
}

inline TaskSlot* TmrRuntime::next_ready(Readied& r) {
  while (DepNode* n = r.node) {
    r.node = n->next;  // read before the consumer may run and retire
    TaskSlot* c = n->consumer;
    if (sub_fetch(c->fanin_pending, 1, tasks_here_) == 0) return c;
  }
  return nullptr;
}

inline void TmrRuntime::retire(TaskSlot* t) {
  for (int i = 0; i < t->retained_count; ++i) release(t->retained[i]);
  release(t);
}

inline bool TmrRuntime::run_complete(uint64_t completed) const {
  return orch_done_.load(std::memory_order_acquire) && completed == submitted_pub_.load(std::memory_order_acquire);
}

// Retirement, the executors' last step on a task: release() drops a
// reference; the last one marks the slot CONSUMED, advances its ring over
// every consecutive consumed slot (TaskRing::advance, publishing the heap,
// dependency-pool and argument-pool tails with it) and wakes an orchestrator
// waiting for that much room.
inline void TmrRuntime::release(TaskSlot* t) {
  if (sub_fetch(t->release_pending, 1, tasks_here_) != 0) return;
  // Once `consumed` is set the ring may pass the slot and the orchestrator
  // reuse it: read the ring before (TSan found the read after).
  TaskRing& ring = rings_[t->ring];
  if (tasks_here_) {  // nobody else advances, nobody parks for room
    t->consumed.store(true, std::memory_order_relaxed);
    ring.advance_consumed();
    return;
  }
  t->consumed.store(true, std::memory_order_seq_cst);
  advance_ring(ring);
}

inline bool TmrRuntime::release_deferred(TaskSlot* t) {
  if (sub_fetch(t->release_pending, 1, tasks_here_) != 0) return false;
  t->consumed.store(true, std::memory_order_release);
  return true;
}

inline void TmrRuntime::advance_ring(TaskRing& ring) {
  if (tasks_here_) {
    ring.advance_consumed();
    return;
  }
  // advance() ends with a seq_cst fence after moving last_alive, so a waiter
  // that set wake_at after this load reads the new last_alive itself. One
  // retirement claims the wake (the exchange): until the woken orchestrator
  // runs, later retirements would each pay a futex call for nobody.
  if (ring.advance()) {
    uint64_t want = ring.wake_at.load(std::memory_order_seq_cst);
    if (ring.last_alive.load(std::memory_order_relaxed) >= want &&
        ring.wake_at.compare_exchange_strong(want, kNoWaiter, std::memory_order_seq_cst)) {
      ring_progress_.notify_all_ordered();
    }
  }
}

}  // namespace taskring::tmr
