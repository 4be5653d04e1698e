// RuntimeBase: the run machinery every L2 runtime on sim shares, so that a
// runtime class keeps only what differs (tmr: streaming orchestration over
// rings; hbg: a prebuilt self-relative image).
//
// It owns the executor threads (executor_loop, below) and what they work
// on: the per-shape ready queues, the run gate, the counters and the fatal
// latch, plus the PTO2Runtime binding the orchestration API dispatches
// through (l2/runtime_ops.hpp). `Item` is the runtime's queued unit, with
// a `shape` member (l2::TaskShape values).
//
// One task's life on an executor is one call, execute(): it asks the runtime
// how to start the item, runs its kernels, and finishes it (finish_task):
// the runtime's complete() says which consumers the completion may make
// ready, this class hands them off, the runtime's retire() lets go of the
// item, and this class counts the completion and ends the run. The runtime's
// hooks return data and never call back into this class, so the route of a
// task reads top to bottom. `Derived` provides:
//
//   struct Readied;   // a cursor over consumers a completion may make ready
//   Started<Readied> start(Item*, int executor, LocalReady<Item>*);  // run kernels, complete at once, or expanded
//   Completion<Readied> complete(Item*);            // after the last block
//   Item* next_ready(Readied&);                     // next consumer made ready, nullptr at the end
//   void retire(Item*);                             // after its consumers were handed off
//   bool run_complete(uint64_t completed) const;    // `completed` completions end the run
//   std::string task_name(const Item*) const;       // for KERNEL_FAILED messages
//
// Run protocol for Derived: begin_run() (refuses a run in flight, waits for
// the executors to leave the previous one, resets the shared state), then
// open the gate when work is queued or will be; finish with close_run() +
// publish_finished(). A run that schedules nothing only publishes.
#pragma once

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "blocks.hpp"
#include "exec/predicate.hpp"
#include "fatal_latch.hpp"
#include "l2_runtime.hpp"
#include "local_ready.hpp"
#include "ready_queue.hpp"
#include "run_counters.hpp"
#include "run_gate.hpp"
#include "runtime_ops.hpp"
#include "sanitize/launch_hook.hpp"
#include "task_shape.hpp"
#include "taskring/chip/error_codes.hpp"

namespace taskring::l2 {

// The executor thread of an L2 runtime on sim: the control processor's
// scheduler and the cores in one loop.
//
// Between runs it parks on the gate. In a run it pops a ready item, executes
// it (RuntimeBase::execute: start, kernels, finish; a completion may leave one
// newly ready consumer in `local.next`, run without a queue round trip so a
// dependency chain stays on one thread; l2/local_ready.hpp), and when idle spins a while
// (yielding, so a runnable orchestrator sharing the hardware thread is not
// starved: a futex wake costs more than the tasks it would deliver), then
// parks until new work or the run's end.
//
// `Sched` provides:
//   Item* pop_ready(LocalReady<Item>&);   // own queue, shared queues, steal
//   void execute(Item*, int executor, LocalReady<Item>*);
//   bool has_ready() const;   // any queue non-empty (a hint)
//   bool orchestrator_feeding() const;  // still submitting, not waiting on
//                                       // the executors (a hint)
//   void on_idle(LocalReady<Item>&);  // a poll found nothing: publish the
//                                     // executor's completions, check the end


// Idle pauses before an executor parks (~100 µs with yields on the build
// machines: a pause is ~25 ns there).
inline constexpr uint32_t kIdleSpins = 4096;
// Pauses between two polls of an idle executor while the orchestrator is
// still submitting (Sched::orchestrator_feeding): ~6 µs here. Polled at
// once, a starved executor takes each task the moment it is pushed, and the
// two threads pass every task's lines back and forth (threaded chain ~205 ns
// per task on two CPUs, ~100 when they shared one); left a few µs, the
// orchestrator submits a batch ahead, which the executor then runs through
// its successors while the orchestrator writes lines the executor left long
// ago (chain 203 -> 124 ns, fan-out 181 -> 132, independent 198 -> 162;
// 64 pauses gave 177 on chain, 1024 no better than 256). Only while the
// queues are empty and the orchestrator is not waiting on the executors:
// the delay is at most one poll per idle spell, and a run that is
// orchestrator-bound ends when its orchestration does either way.
inline constexpr uint32_t kFeedingPollPauses = 256;

template <typename Sched>
void executor_loop(RunGate& gate, Sched& sched, int index) {
  uint64_t seen = 0;
  while (!gate.shutting_down()) {
    uint64_t gen = gate.generation();
    if (gen == seen || !gate.active()) {
      uint32_t epoch = gate.work().begin_park();
      if (gate.shutting_down() || (gate.generation() != seen && gate.active())) {
        gate.work().cancel_park();
        continue;
      }
      gate.work().finish_park(epoch, 50'000'000);
      continue;
    }
    if (!gate.enter()) continue;
    seen = gen;
    if (sched.executors_sit_out()) {  // the orchestrator runs this run's tasks (RunRequest::tasks_on_orchestrator)
      gate.leave();
      continue;
    }
    LocalReady<typename Sched::Item> local;
    local.executor = index;
    local.lane = index;
    uint32_t idle = 0;
    bool searching = false;  // RunGate::set_searching: pushers skip the wake
    while (gate.active()) {
      auto* item = local.next != nullptr ? local.next : sched.pop_ready(local);
      local.next = nullptr;
      if (item != nullptr) {
        if (searching) gate.set_searching(index, searching = false);
        idle = 0;
        sched.execute(item, index, &local);
        continue;
      }
      if (!searching) gate.set_searching(index, searching = true);
      sched.on_idle(local);
      if (sched.orchestrator_feeding()) {
        if ((idle += kFeedingPollPauses) < kIdleSpins) {
          sched_yield();  // a poll's worth of CPU for an orchestrator sharing this one
          // In steps, so the orchestration's end (or its wait on the
          // executors) is seen within ~1 µs, not at the next poll.
          for (uint32_t r = 0; r < kFeedingPollPauses && sched.orchestrator_feeding(); r += 32) {
            for (int k = 0; k < 32; ++k) Waiter::cpu_relax();
          }
          continue;
        }
      } else if (++idle < kIdleSpins) {
        if ((idle & 31) == 0)
          sched_yield();
        else
          Waiter::cpu_relax();
        continue;
      }
      gate.set_searching(index, searching = false);  // before the park is announced
      uint32_t epoch = gate.work().begin_park();
      if (!gate.active() || sched.has_ready()) {
        gate.work().cancel_park();
        continue;
      }
      gate.work().finish_park(epoch, 2'000'000);
    }
    if (searching) gate.set_searching(index, false);
    sched.on_idle(local);  // a run closed early (fatal) still counts what this executor completed
    gate.leave();
  }
}


// The id a task carries in the device profile: its ring task id (tmr) or
// its index in the run's image (hbg).
template <typename Item>
uint64_t profile_task_id(const Item& it) {
  if constexpr (requires { it.id.raw; }) {
    return it.id.raw;
  } else {
    return static_cast<uint64_t>(it.index);
  }
}

// What a runtime's start() decides for a popped item.
template <typename Readied>
struct Started {
  enum Kind { kRunKernels, kCompleteNow, kExpanded } kind = kRunKernels;
  Readied ready{};  // kExpanded: the items the expansion made ready (handed off, nothing completes)
};

// What a runtime's complete() hands back: the consumers to look at, and
// whether this completion counts toward the run's total (an hbg Graph node
// does not; the Graph task that holds it does).
template <typename Readied>
struct Completion {
  Readied ready{};
  bool counts = true;
};

template <typename Derived, typename ItemT>
class alignas(64) RuntimeBase : public L2Runtime {
 public:
  using Item = ItemT;

  // Makes and initialises a Derived (which declares RuntimeBase a friend and
  // implements `Status init()`).
  static Expected<std::unique_ptr<Derived>> create(const L2RuntimeConfig& config) {
    if (config.device == nullptr) return invalid_argument("L2 runtime: no device");
    std::unique_ptr<Derived> rt(new Derived(config));
    TASKRING_RETURN_IF_ERROR(rt->init());
    return rt;
  }
  RuntimeBase(const RuntimeBase&) = delete;
  RuntimeBase& operator=(const RuntimeBase&) = delete;

  // ---- L2Runtime ----
  bool run_finished() const override { return run_finished_.load(std::memory_order_acquire); }
  Status wait_run(Deadline deadline) override {
    return done_.wait([this] { return run_finished(); }, deadline, "the L2 run to finish");
  }
  Status run_status() const override { return fatal_.status(); }
  RunStats stats() const override { return counters_.fill(stats_); }
  void report_fatal(int32_t code, const std::string& message) override {
    fatal_.report(code, message);
    gate_.notify_work();
    wake_blocked();
  }

  // ---- orchestration side (l2/runtime_ops.hpp) ----
  bool is_fatal() const { return fatal_.is_set(); }
  // Whether the executors leave the current run to the orchestrating thread
  // (set before the run opens, read by executors after they see it open).
  bool executors_sit_out() const { return executors_sit_out_; }
  int32_t cluster_count() const { return topo_.clusters; }
  int32_t aiv_count() const { return topo_.aiv_count(); }
  Device* device() const { return config_.device; }
  PTO2Runtime* api() { return &api_.rt; }

  // ---- executor side (executor_loop above, l2/local_ready.hpp) ----
  // The executor's own queue first (what its completions made ready), then
  // the shared queues in kPopOrder, then the other executors' own queues
  // (steal, oldest first). Every kSharedEvery local tasks the shared queues
  // go first.
  Item* pop_ready(LocalReady<Item>& local) {
    if (tasks_here_) return pop_ready_alone(local);
    ReadyQueue<Item>* own = local.executor >= 0 ? &own_[local.executor] : nullptr;
    if (own != nullptr && local.since_shared < kSharedEvery) {
      if (Item* it = own->pop()) {
        ++local.since_shared;
        return it;
      }
    }
    local.since_shared = 0;
    for (int q : kPopOrder) {
      if (Item* it = queues_[q].pop()) return it;
    }
    for (int k = 0; k < executors_; ++k) {
      // Own queue at k == 0, then the others starting after it.
      const int e = (local.executor + k) % executors_;
      if (Item* it = own_[e].pop()) return it;
    }
    return nullptr;
  }
  // pop_ready while the run's tasks all live on this thread (tasks_here_):
  // executor 0's queue and the shared ones, without a locked instruction.
  Item* pop_ready_alone(LocalReady<Item>& local) {
    if (Item* it = own_[0].pop_alone()) return it;
    local.since_shared = 0;
    for (int q : kPopOrder) {
      if (Item* it = queues_[q].pop_alone()) return it;
    }
    return nullptr;
  }
  // Runtimes whose orchestration feeds the executors while they run
  // (tmr) say so; the others never hold an idle executor back.
  bool orchestrator_feeding() const { return false; }
  bool has_ready() const {
    for (const auto& q : queues_) {
      if (!q.empty_hint()) return true;
    }
    for (int e = 0; e < executors_; ++e) {
      if (!own_[e].empty_hint()) return true;
    }
    return false;
  }
  // Publishes the completions `local` counted (l2/local_ready.hpp);
  // returns the run's total after them, or 0 when there was nothing to add.
  uint64_t publish_completions(LocalReady<Item>& local) {
    if (local.unpublished == 0) return 0;
    const uint64_t n = local.unpublished;
    local.unpublished = 0;
    return counters_.add_completed(n);
  }
  // The executor loop's one call per popped item: start, kernels, finish.
  void execute(Item* it, int executor, LocalReady<Item>* local) {
    Derived* self = static_cast<Derived*>(this);
    counters_.mark_scheduled();
    auto started = self->start(it, executor, local);
    if (started.kind == Started<typename Derived::Readied>::kExpanded) {
      while (Item* c = self->next_ready(started.ready)) hand_off(c, local);
      return;
    }
    if (started.kind == Started<typename Derived::Readied>::kCompleteNow) {
      finish_task(it, local);
      return;
    }
    execute_task(it, executor, local);
  }
  // A poll found nothing: publish this executor's completions and end the
  // run if they were the last.
  void on_idle(LocalReady<Item>& local) {
    publish_completions(local);
    end_run_if_complete();
  }

 protected:
  explicit RuntimeBase(const L2RuntimeConfig& config) : config_(config) {}
  ~RuntimeBase() override = default;

  // Wakes what the runtime blocks on besides the executors (a fatal error
  // or shutdown must end those waits too).
  virtual void wake_blocked() {}

  // Binds the ops table and starts min(executors, clusters) executors; an
  // inline runtime (config_.run_inline) gets one logical executor and no
  // thread: the caller of start_run is that executor.
  void start_executors() {
    topo_ = config_.device->topology();
    executors_ = config_.run_inline ? 1 : std::max(1, std::min(config_.executors, topo_.clusters));
    counters_.set_executors(executors_);
    gate_.set_executors(executors_);
    inline_local_.executor = 0;
    inline_local_.lane = config_.run_inline ? 0 : executors_;  // threaded: the orchestrator's own lane
    own_ = std::make_unique<ReadyQueue<Item>[]>(static_cast<size_t>(executors_));
    places_.assign(static_cast<size_t>(executors_), exec::LaunchPlace{0, executors_, topo_});
    for (int e = 0; e < executors_; ++e) own_[e].init(std::max<uint64_t>(own_capacity_, 2));
    api_.rt.ops = runtime_ops<Derived>();
    api_.owner = static_cast<Derived*>(this);
    for (int e = 0; e < executors_ && !config_.run_inline; ++e) {
      executor_threads_.emplace_back([this, e] { executor_loop(gate_, *static_cast<Derived*>(this), e); });
    }
  }

  // Gives a run in flight the drain budget (TASKRING_STALL_TIMEOUT_MS), stops
  // it as fatal, and stops the executors. Call first in ~Derived.
  void stop_executors() {
    if (!run_finished()) {
      (void)wait_run(Deadline::after_ms(config_.stall_timeout_ms));
      report_fatal(PTO2_ERROR_SCHEDULER_TIMEOUT, "runtime destroyed while a run was in flight");
    }
    gate_.shut_down();
    wake_blocked();
    for (auto& t : executor_threads_) t.join();
    executor_threads_.clear();
  }

  // Start of a run: misuse errors, then quiescence (executors still leaving
  // the previous run would otherwise see its queues, tables and counters
  // reset under them), then a clean slate.
  Status begin_run(const RunRequest& request, const char* runtime) {
    if (!run_finished()) return failed_precondition(std::string(runtime) + ": a run is already in flight");
    if (request.entry == nullptr) return invalid_argument(std::string(runtime) + ": null orchestration entry");
    TASKRING_RETURN_IF_ERROR(gate_.quiesce(Deadline::after_ms(config_.stall_timeout_ms)));
    request_ = request;
    window_ = config_.device->linear_window();
    // Constant for the run: built here, not per task.
    for (int e = 0; e < executors_; ++e) {
      places_[e] = exec::LaunchPlace{e,       executors_, topo_, config_.profile, config_.stall_timeout_ms,
                                     window_.bytes != 0 ? &window_ : nullptr};
    }
    stats_ = RunStats();
    counters_.reset();
    fatal_.reset();
    run_finished_.store(false, std::memory_order_seq_cst);
    return Status::Ok();
  }

  // Resizes every ready queue (shared and per executor). Only between runs
  // (after begin_run).
  void size_queues(uint64_t capacity) {
    for (auto& q : queues_) q.init(capacity);
    own_capacity_ = capacity;
    for (int e = 0; own_ != nullptr && e < executors_; ++e) own_[e].init(capacity);
  }
  void push_ready(Item* it) {
    ReadyQueue<Item>& q = queues_[static_cast<int>(it->shape) & (kNumShapes - 1)];
    if (tasks_here_) {  // nobody else takes it, nobody to wake
      q.push_alone(it);
      return;
    }
    q.push(it);
    gate_.notify_work_after_push();
  }
  // `c` was made ready by a completion on `local`'s thread: it becomes the
  // immediate successor when there is none yet and the fairness bound allows
  // (l2/local_ready.hpp), else it goes to that executor's own queue
  // (other executors steal from it), or to the shared queue off an executor
  // or when the own queue is full.
  void hand_off(Item* c, LocalReady<Item>* local) {
    if (local->next == nullptr && local->since_shared < kSharedEvery) {
      local->next = c;
      ++local->since_shared;
      return;
    }
    if (tasks_here_) {
      if (local->executor < 0 || !own_[local->executor].push_alone(c)) push_ready(c);
      return;
    }
    if (local->executor < 0 || !own_[local->executor].push(c)) {
      push_ready(c);
      return;
    }
    gate_.notify_work_after_push();
  }

  // Inline runs (config_.run_inline): the calling thread is executor 0.
  // Runs one ready item; false when none is ready.
  bool run_one_inline() {
    Item* it = inline_local_.next != nullptr ? inline_local_.next : pop_ready(inline_local_);
    inline_local_.next = nullptr;
    if (it == nullptr) return false;
    execute(it, 0, &inline_local_);
    return true;
  }
  // A one-thread run (tasks_here_) runs a task the moment its submit finds
  // it ready, and then the successor that task's completion kept: nothing
  // else could run it sooner, and its slot, arguments and map entry are in
  // cache now. Every earlier task of such a run has then run too, so a later
  // submit finds its producers complete and wires no edge (the serial order
  // of the orchestration, one valid schedule of its graph). What goes to the
  // queues instead waits there for the next drain (run_ready_here): an SPMD
  // task's later blocks (one block per execute), and consumers a completion
  // hands off past the first; a submit that needs one of those wires an edge
  // as on a threaded run.
  void run_now(Item* it) {
    execute(it, 0, &inline_local_);
    while (Item* n = inline_local_.next) {
      inline_local_.next = nullptr;
      execute(n, 0, &inline_local_);
    }
  }
  // Runs ready items on the calling thread until none is ready, as executor
  // 0's helper on a threaded run (its own records, counters and queue are
  // safe to share; profiling's and the sanitizer's are not, so the caller
  // keeps to runs without them), then publishes what it completed: a
  // threaded run ends on published counts.
  void run_ready_here() {
    while (run_one_inline()) {
    }
    if (!config_.run_inline) {
      publish_completions(inline_local_);
      end_run_if_complete();
    }
  }
  // Runs ready items until the run finishes. Nothing ready with the run
  // unfinished cannot change on an inline run (no other thread completes
  // tasks): the run fails with SCHEDULER_TIMEOUT, naming how many of its
  // stats_.tasks_submitted tasks are left, instead of waiting.
  void run_inline_until_finished() {
    while (!run_finished()) {
      if (run_one_inline()) continue;
      on_idle(inline_local_);
      if (run_finished()) return;
      const uint64_t done = counters_.completed.load(std::memory_order_acquire);
      report_fatal(PTO2_ERROR_SCHEDULER_TIMEOUT, "inline run: no task is ready but " +
                                                     std::to_string(stats_.tasks_submitted - done) + " of " +
                                                     std::to_string(stats_.tasks_submitted) + " have not completed");
      if (close_run()) publish_finished();
      return;
    }
  }

  // Counts one completion made on `local`'s thread. Returns the run's total
  // when this call published it (off an executor: always; on one: every
  // kPublishEvery), else 0: the executor publishes the rest when it next
  // finds no work (on_idle).
  uint64_t count_completion(LocalReady<Item>* local) {
    ++local->unpublished;
    if (local->executor >= 0 && local->unpublished < kPublishEvery) return 0;
    return publish_completions(*local);
  }

  // After an item's last block (or at once when it runs no kernel): the
  // runtime completes it and says which consumers to look at, they are
  // handed off (the first one stays on this thread), the runtime retires the
  // item, and the completion is counted; the last one ends the run.
  [[gnu::always_inline]] void finish_task(Item* it, LocalReady<Item>* local) {
    Derived* self = static_cast<Derived*>(this);
    auto done = self->complete(it);
    while (Item* c = self->next_ready(done.ready)) hand_off(c, local);
    self->retire(it);
    if (!done.counts) return;
    if (count_completion(local) != 0) end_run_if_complete();
  }
  // Ends the run when the runtime says its published completions are all
  // there are (Derived::run_complete).
  void end_run_if_complete() {
    if (!static_cast<const Derived*>(this)->run_complete(counters_.completed.load(std::memory_order_acquire))) return;
    if (close_run()) publish_finished();
  }

  // End of a run: the one caller for which close_run() is true publishes.
  bool close_run() { return gate_.close(); }
  void publish_finished() {
    if (counters_.last_ns.load(std::memory_order_relaxed) == 0) {
      counters_.last_ns.store(mono_ns(), std::memory_order_relaxed);
    }
    run_finished_.store(true, std::memory_order_seq_cst);
    done_.notify_all();
  }

  // Executes a kernel or dummy task: a dummy completes at once, so does a
  // task whose dispatch predicate (Item::predicate) is false when its first
  // block is claimed. A require_sync_start task (Item::sync_start) runs all
  // its blocks here as one co-resident group; otherwise one SPMD block is
  // claimed and run (a MIX block's kernels co-resident) (skipped once the run is fatal; a
  // kernel failure is latched as KERNEL_FAILED naming the task with
  // Derived::task_name), and the last block finishes it (finish_task).
  void execute_task(Item* it, int executor, LocalReady<Item>* next_local) {
    Derived* self = static_cast<Derived*>(this);
    if (static_cast<int>(it->shape) == static_cast<int>(TaskShape::kDummy)) {
      finish_task(it, next_local);
      return;
    }
    auto task_name = [self, it] { return self->task_name(it); };
    const exec::LaunchTask task{it->tensors, it->tensor_count, it->scalars,         it->scalar_count,
                                it->kernels, it->block_num,    profile_task_id(*it)};
    const exec::LaunchPlace& place = places_[executor];
    std::string failure;
    std::atomic<uint64_t>& calls = counters_.kernel_calls_of(next_local->lane);
    if (it->sync_start && it->block_num > 1) {
      // require_sync_start: one executor claims the whole task (it is never
      // requeued) and starts every block together as one co-resident group.
      if (exec::predicate_allows_run(it->predicate, *config_.device) && !is_fatal() &&
          !(config_.sanitizer != nullptr
                ? launch_sanitized(task, /*block=*/-1, false, place, calls, task_name, &failure)
                : l2::run_co_resident(task, 0, it->block_num, /*whole_task=*/true, place, *config_.device,
                                          request_.kernels, calls, task_name, &failure))) {
        report_fatal(PTO2_ERROR_KERNEL_FAILED, failure);
      }
      finish_task(it, next_local);
      return;
    }
    // The AIC/AIV kernels of one MIX block share a cluster: they run
    // together, so one may wait for another (an AIC->AIV FIFO).
    const bool mix = static_cast<int>(it->shape) == static_cast<int>(TaskShape::kMix);
    run_one_block(
        it, [&] { return exec::predicate_allows_run(it->predicate, *config_.device); },
        [this](Item* x) { push_ready(x); },
        [&](int block) {
          if (is_fatal()) return;
          // TASKRING_SANITIZE on: out of line; off, this branch is all it costs.
          const bool ok = config_.sanitizer != nullptr
                              ? launch_sanitized(task, block, mix, place, calls, task_name, &failure)
                          : mix ? l2::run_co_resident(task, block, 1, /*whole_task=*/false, place, *config_.device,
                                                      request_.kernels, calls, task_name, &failure)
                                : l2::run_block(task, block, place, *config_.device, request_.kernels, calls,
                                                task_name, &failure);
          if (!ok) report_fatal(PTO2_ERROR_KERNEL_FAILED, failure);
        },
        [&] { finish_task(it, next_local); });
  }

  // One block launch (block -1: every block of a require_sync_start task
  // as one co-resident group) through the sanitizer (sanitize/launch_hook.hpp).
  // Kept out of line so that execute_task's path with the sanitizer off is
  // the plain launch behind one branch.
  template <typename NameFn>
  [[gnu::noinline]] bool launch_sanitized(const exec::LaunchTask& task, int block, bool mix,
                                          const exec::LaunchPlace& place, std::atomic<uint64_t>& calls,
                                          NameFn& task_name, std::string* failure) {
    return sanitize::sanitized_launch(*config_.sanitizer, task, task_name, failure, [&](const exec::LaunchTask& t) {
      if (block < 0) {
        return l2::run_co_resident(t, 0, t.block_num, /*whole_task=*/true, place, *config_.device, request_.kernels,
                                   calls, task_name, failure);
      }
      return mix ? l2::run_co_resident(t, block, 1, /*whole_task=*/false, place, *config_.device, request_.kernels,
                                       calls, task_name, failure)
                 : l2::run_block(t, block, place, *config_.device, request_.kernels, calls, task_name, failure);
    });
  }

  L2RuntimeConfig config_;
  bool executors_sit_out_ = false;  // of the current run; written only between runs
  // The current run's tasks all live on one thread, the one orchestrating
  // it: an inline run, or one whose executors sit out. Its queues, counters
  // and slots then need no locked instruction (tmr sets it at start_run;
  // written only between runs).
  bool tasks_here_ = false;
  Topology topo_;
  int executors_ = 1;
  RunRequest request_;  // of the current run
  LinearWindow window_;  // the device's, taken at begin_run (exec::LaunchPlace::window)
  std::vector<exec::LaunchPlace> places_;  // per executor, for the current run
  // Fields by writer, each group on lines of its own (the class is aligned
  // to a line): the orchestrator writes stats_ on every submit, executors
  // count into counters_ and read places_, fatal_ and the queues on every
  // task. Where a group's line depended on the heap address of the runtime
  // object, runs of one binary fell into a fast and a slow mode
  // (docs/bench-log, stop 23).
  alignas(64) RunStats stats_;  // orchestration-side fields of the current run
  alignas(64) RunCounters counters_;
  alignas(64) FatalLatch fatal_;
  RunGate gate_;

 private:
  RuntimeBinding<Derived> api_{};
  ReadyQueue<Item> queues_[kNumShapes];      // shared, per shape
  std::unique_ptr<ReadyQueue<Item>[]> own_;  // per executor (l2/local_ready.hpp)
  uint64_t own_capacity_ = 0;                // of every queue, shared and own
  std::atomic<bool> run_finished_{true};
  Waiter done_;
  std::vector<std::thread> executor_threads_;
  // Executor 0's state on an inline run, and the orchestrator's when it
  // helps (run_ready_here): written by that thread only.
  alignas(64) LocalReady<Item> inline_local_{};
};

}  // namespace taskring::l2
