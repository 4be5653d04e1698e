// Engine: the L3 orchestrator and scheduler over a set of endpoints.
//
// Threads: the orchestrating thread (submit, scopes, alloc, control) and one
// scheduler thread. One mutex (`mu_`) guards every task, run, FIFO and the
// heap ring; it is held for short critical sections only (no waits, no
// endpoint I/O except the non-blocking start/poll).
//
// Task life: BUILDING (orchestrator only, invisible to the scheduler) ->
// PENDING (waits for producers) -> READY (in a FIFO) -> RUNNING ->
// COMPLETED | FAILED, or SKIPPED (never started: a producer failed, the
// orchestration failed, or the worker closed). A task is published (wired to
// its producers and, when ready, queued) in one critical section, so the
// scheduler never sees a half-built task.
//
// Scheduling, each pass: drain every endpoint's completions first, then
// dispatch: the head of the group FIFO (every target's queue has room:
// queue every member; otherwise it reserves its chips against single
// tasks), then each chip's FIFO (unless reserved), then the SUB FIFO (its
// head takes any idle SUB workers, a group as many as it has members).
// A chip endpoint holds a queue of tasks (Endpoint::depth): what one pass
// queues for a chip goes out as one batch (Endpoint::flush), and a chip
// task whose unfinished producers are all queued already is queued behind
// them at once (try_chain, engine_chain.cpp), so a chain of tasks on the
// same chips costs one dispatch. A failure poisons every transitive
// consumer; the first error of a run wins and later submits of that run
// return it at once.
//
// Runs do not overlap: begin_run() waits until the previous run finished.
//
// The component: this folder (src/node/dag) is the engine; this header is
// its one internal header, which the node's NodeWorker and L4's NetWorker
// include (scripts/check-includes allows src/net this header only). What a
// run borrows besides its tasks (comm domains, DomainRegistry) is not the
// engine's: it hooks into the run through add_run_hooks() and
// EngineConfig::at_every_fence.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "dep_map.hpp"
#include "endpoint.hpp"
#include "exit_watch.hpp"
#include "heap_ring.hpp"
#include "taskring/base/waiter.hpp"
#include "taskring/node/orchestrator.hpp"
#include "taskring/node/run_types.hpp"

namespace taskring::node {

enum class TaskStatus : uint8_t { kBuilding, kPending, kReady, kRunning, kCompleted, kFailed, kSkipped };

struct Task {
  uint64_t index = 0;  // in its run
  bool sub = false;    // SUB task(s) or chip task(s)
  bool group = false;
  int callable = -1;
  std::vector<TaskPayload> members;
  std::vector<int> targets;  // chips (chip tasks) or the SUBs it ran on
  TaskStatus status = TaskStatus::kBuilding;
  int fanin = 0;  // producers not finished
  std::vector<Task*> consumers;
  // Producers not finished when it was submitted (try_chain reads them).
  std::vector<Task*> producers;
  int running = 0;       // members in flight
  bool not_run = false;  // a member came back OutcomeKind::kNotRun
  Status not_run_why;    // the first such member's reason
  // Queued chip tasks: the GroupGate a group counts down (-1: none) and the
  // one the task waits for before it starts (-1: none); engine_chain.cpp.
  int gate = -1;
  int wait_gate = -1;
  Status error;      // first member failure
  std::string what;  // "task 3 (chip 1, callable 'bgemm')" for messages
};

struct ScopeFrame {
  uint32_t id;
};

class Engine;

// Lets a thread that waits for a run make the run's progress itself
// (Engine::drive) instead of waking the scheduler thread for it: on a node
// whose chips and parent fill the CPUs, each hand-off to that thread was a
// wake of a parked thread, and four of them made the 117 µs a one-task run
// cost. Shared by the engine and its runs, so a handle waited on after the
// engine is gone finds `engine` null; Engine::shutdown clears it and waits
// until no driver is inside.
struct DriveGate {
  std::mutex mu;
  std::condition_variable left;
  Engine* engine = nullptr;  // under mu
  int inside = 0;            // drivers between enter and leave, under mu
};

// What a fence hook learns: every task of the run finished (or never
// started); `failed`: the run has an error; `closing`: the engine shuts
// down (its endpoints are about to stop; a hook should not talk to them).
struct RunFence {
  bool failed = false;
  bool closing = false;
};

// The engine's live record of one run; a RunHandle shares it
// (run_types.hpp: how it relates to the run summaries).
struct RunState {
  uint64_t id = 0;
  // Published once with release; `status` and `counts` are final after.
  std::atomic<bool> done{false};
  Status status;
  RunCounts counts;
  Waiter waiter;
  // Set where waiters drive the engine (EngineConfig::waiters_drive).
  std::shared_ptr<DriveGate> gate;

  // ---- engine-private, under Engine::mu_ ----
  std::deque<std::unique_ptr<Task>> tasks;
  Status first_error;
  bool orchestrating = true;
  uint64_t unfinished = 0;
  uint64_t retired = 0;          // tasks [0, retired) have all finished
  std::vector<uint32_t> scopes;  // open scope ids, innermost last
  uint32_t next_scope = 1;
  uint64_t t_begin = 0, t_orch_end = 0, t_first_dispatch = 0, t_last_done = 0;
  // Engine::add_run_hooks: what the run borrowed (its comm domains).
  std::vector<std::function<void()>> on_abort;
  std::vector<std::function<Status(const RunFence&)>> at_fence;
};

// Who drives the engine, for its messages: the engine names no caller of
// its own, so one engine serves L3 and L4 with each level's words.
struct EngineApi {
  // The public worker class: "<worker>::submit", "<worker>::alloc_shared".
  std::string worker;
  // The setting that gives SUB workers ("NodeConfig::sub_workers"); empty
  // where the level has none.
  std::string sub_workers_setting;
  // The setting that sizes the heap ring of Orchestrator::alloc
  // ("NodeConfig::heap_ring_bytes"); empty where the level has no heap ring.
  std::string heap_setting;
};

class DomainRegistry;

struct EngineConfig {
  std::vector<std::string> chip_callables;  // names, by id
  std::vector<std::string> sub_callables;
  // Whether [addr, addr+bytes) is host memory every child sees.
  std::function<bool(uint64_t addr, uint64_t bytes)> host_visible;
  uint64_t heap_base = 0;  // the heap ring
  uint64_t heap_bytes = 0;
  uint64_t heap_wait_ms = 10000;
  uint64_t control_timeout_ms = 30000;
  // Endpoint::watch_stall's limit, from the exit watcher (0: off), and the
  // setting named when it kills a child.
  uint64_t stall_timeout_ms = 0;
  std::string stall_knob;
  // Endpoint::watch_task's limit for chip tasks, from the same watcher
  // (0: off), and the settings named when it kills a chip.
  uint64_t task_timeout_ms = 0;
  std::string task_timeout_knob;
  uint64_t run_admission_ms = 600000;
  // The level is a label: what a target is called in messages ("chip" at
  // L3, "rank" at L4, where each target is a whole node).
  std::string target_word = "chip";
  // Spans of a run: <family>.run, .run.orch, .run.dispatch ("network" at L4).
  std::string span_family = "node";
  EngineApi api;
  // When set, replaces the L3 placement rules for every tensor argument (a
  // HOST tensor in the shared heap, or a DEVICE address): non-OK rejects
  // the argument with that message. L4 uses it to check remote descriptors.
  std::function<Status(const ChipTensor&)> check_tensor;
  // Runs once at every run's fence, after the run's own fence hooks (the
  // comm domain cache empties itself after a failed run); its error fails
  // the run. Unset: nothing.
  std::function<Status(const RunFence&)> at_every_fence;
  // Whether the threads that orchestrate and wait for a run move it along
  // themselves: each submit dispatches what is ready, and RunHandle::wait
  // drains completions and dispatches (Engine::drive) while the scheduler
  // thread stays parked aside. L3 and L4 set it (an L4 endpoint calls MPI
  // from the calling thread only under MPI_THREAD_MULTIPLE); off, every
  // pass runs on the scheduler thread (tests of that mode).
  bool waiters_drive = false;
  // How long a driver (Engine::drive) whose bell has no spin budget (its
  // processes outnumber the CPUs, ShmBell::spin 0) yields its CPU in a loop,
  // watching the bell, before it parks. A park costs the driver a cross-CPU
  // wake when its run's last task ends (~5-25 µs on a 2-vCPU guest), more
  // than a small collective's whole run; a yield hands the CPU to a runnable
  // child at once. 0 (the default): park at once. The NodeWorker sets
  // kDriverYieldNs where its children alone fit the CPUs (node_worker.cpp).
  uint64_t driver_yield_ns = 0;
};

inline constexpr uint64_t kDriverYieldNs = 30'000;

class Engine {
 public:
  // `bell`: rung by endpoints on every completion (shared with children).
  Engine(EngineConfig config, std::vector<std::unique_ptr<Endpoint>> chips, std::vector<std::unique_ptr<Endpoint>> subs,
         ShmBell* bell);
  ~Engine();

  void start();  // the scheduler thread
  // A bell every chip child also parks on (bell_wait_either). When set, a
  // group's members are staged, then woken with one ring of it, so they
  // start together: one wake per member lets the first woken children
  // preempt the scheduler while it still wakes the rest (on 2 cores the
  // last of 8 started up to 1.4 ms after the first). Call before start().
  // `countdowns` (one per chip, may be null): a group launched while
  // nothing else waits for a chip wakes this engine only on its last
  // member's completion or on a failure (Endpoint::start_staged).
  // `gates` (kGroupGates, may be null): with them, a group is queued
  // behind the group before it on the same chips (engine_chain.cpp).
  void set_group_bell(ShmBell* bell, std::atomic<uint32_t>* countdowns = nullptr, GroupGate* gates = nullptr) {
    group_bell_ = bell;
    group_countdowns_ = countdowns;
    gates_ = bell != nullptr ? gates : nullptr;
  }
  // Cancels unstarted work with `why`, waits until nothing runs (or
  // `drain`), stops the scheduler, fails what still runs with `why`.
  void shutdown(const Status& why, Deadline drain);

  // Runs `orch` as one run and returns it (finished or not). Its
  // Orchestrator allocates comm domains from `domains` (nullptr: it has
  // none, UNIMPLEMENTED). `caller_waits`: the caller waits for the run next
  // (NodeWorker::run), so the scheduler thread is not recalled to carry the
  // run meanwhile.
  std::shared_ptr<RunState> run_orchestration(const std::function<Status(Orchestrator&)>& orch,
                                              DomainRegistry* domains = nullptr, bool caller_waits = false);
  // Waits for `run` until `deadline`, moving it along from this thread when
  // its gate is open (EngineConfig::waiters_drive), else parked on its
  // waiter. The run's Status, or DEADLINE_EXCEEDED (the run goes on).
  static Status wait_run(RunState& run, Deadline deadline);
  // A thread polls `run` without waiting: the scheduler thread, if parked
  // aside, goes back to carrying the engine's runs.
  static void nudge(RunState& run);

  // ---- what Orchestrator forwards ----
  Status submit(RunState* run, bool sub, int callable, std::span<const ChipTaskArgs* const> args,
                std::span<const int> chips, const char* api);
  Status scope_begin(RunState* run);
  Status scope_end(RunState* run);
  Expected<ChipTensor> alloc(RunState* run, std::span<const uint32_t> shapes, DataType dtype);
  // Waits until every task `run` submitted so far has finished (or the run
  // failed: its first error), so that a control call is ordered after them.
  // A chip serves control calls only between two tasks: a copy would race
  // the tasks, and a domain's members, which meet at a barrier inside their
  // attach, could deadlock with an earlier collective still waiting for a
  // member already parked there. Submitted tasks depend only on earlier
  // ones, so they always finish. `api` names the caller in the
  // DEADLINE_EXCEEDED after EngineConfig::run_admission_ms.
  Status drain_submitted(RunState* run, const std::string& api);
  Expected<uint64_t> control(int chip, const ControlRequest& req, const char* api);
  // Whether `run` may take more work: the closing status, or the run's
  // first error; OK otherwise.
  Status run_open(RunState* run);
  // Hooks what `run` borrowed: `on_abort` runs under the engine's lock when
  // the run gets its first error (at once if it has one now) and must not
  // block (it flags, so that every wait on the borrowed thing ends);
  // `at_fence` runs once every task of the run finished, before the run is
  // published done, the last added first; its error fails the run.
  void add_run_hooks(RunState* run, std::function<void()> on_abort, std::function<Status(const RunFence&)> at_fence);
  uint64_t control_timeout_ms() const { return cfg_.control_timeout_ms; }
  // Scheduling passes the scheduler thread made (not the drivers'). For
  // tests: a driven run should cost it none.
  uint64_t scheduler_passes() const { return scheduler_passes_.load(std::memory_order_relaxed); }
  // Parks on the bell that drivers made (futex waits, not yields). For
  // tests: a completion within EngineConfig::driver_yield_ns costs none.
  uint64_t driver_parks() const { return driver_parks_.load(std::memory_order_relaxed); }

  bool host_visible(uint64_t addr, uint64_t bytes) const { return cfg_.host_visible(addr, bytes); }
  int chips() const { return static_cast<int>(chips_.size()); }
  int subs() const { return static_cast<int>(subs_.size()); }
  Endpoint& chip_endpoint(int i) { return *chips_[static_cast<size_t>(i)]; }
  // Endpoint::expect_work for each of `chips`, then one ring of the group
  // bell (without one, the hint waits for the chip's next wake).
  void expect_work(std::span<const int> chips);
  Endpoint& sub_endpoint(int i) { return *subs_[static_cast<size_t>(i)]; }

 private:
  struct Slot {  // one endpoint's in-flight member
    Task* task = nullptr;
  };

  std::shared_ptr<RunState> begin_run(Status* error);
  void end_orchestration(RunState* run, const Status& orch_status);
  Status validate(bool sub, int callable, std::span<const ChipTaskArgs* const> args, std::span<const int> chips,
                  const std::string& what);

  void scheduler_loop();
  // One scheduling pass under mu_: completions, then dispatch. `last_check`:
  // the caller's time of its last liveness check (waitpid on busy children).
  struct Pass {
    bool progressed = false;
    bool busy = false;
  };
  Pass pass(uint64_t* last_check);
  // The driving thread's loop (see DriveGate).
  Status drive(RunState& run, Deadline deadline);
  // The scheduler thread parks aside while a driver runs, and stays aside
  // after the last driver left an idle engine, until recall() or an idle
  // slice passes.
  void park_aside();
  void recall_locked();  // under mu_
  bool idle_locked() const { return running_members_ == 0 && current_ == nullptr; }
  bool drain_completions(bool check_liveness);
  bool dispatch();
  bool dispatch_groups();
  bool dispatch_singles();
  bool dispatch_subs();
  void launch(Task* t, const std::vector<int>& targets);
  // engine_chain.cpp: queues pending chip task `t` behind its unfinished
  // producers when every one of them is queued on the chips already and
  // in-order execution there keeps every dependency (true: queued).
  bool try_chain(Task* t);
  bool chainable(const Task* t, std::vector<uint32_t>* after, int* wait_gate) const;
  // Whether group `t` may be queued on its chips now: every target's queue
  // is empty, or ends with the same group of the same chips, which has a
  // gate (`*wait_gate`: that gate, or -1).
  bool group_fits(const Task* t, int* wait_gate) const;
  void take_gate(Task* t);      // a free GroupGate for queued group t, if any
  void release_gates(Task* t);  // t finished
  void chain_consumers(Task* t);
  // Publishes every chip queue filled since the last flush (one batch each)
  // and rings the group bell once if a group was queued.
  void flush_staged();
  bool has_room(int chip) const;
  // No ready task is queued for any of `chips`, and no ready group at all.
  bool nothing_waits_for_chips(const std::vector<int>& chips) const;
  void member_done(Task* t, const Outcome& o);
  void finish(Task* t, const Status& s);
  void poison_consumers(Task* t, const Status& cause);
  void skip(Task* t, const Status& why);  // PENDING/READY -> SKIPPED, then its consumers
  void cancel_unstarted(RunState* run, const Status& why);
  void note_error(RunState* run, const Status& s);
  void retire(RunState* run);
  void maybe_finish_run(RunState* run);
  // The run's three span records in one write (called only while spans are
  // on). Never inlined: its SpanBatch holds a 4 KiB buffer, which inside
  // maybe_finish_run made every run's end reach one stack page deeper, spans
  // on or off (a first-touch fault in one of bench_node's small SUB runs).
  [[gnu::noinline]] void emit_run_spans(const RunState& run) const;
  bool any_busy() const;

  EngineConfig cfg_;
  std::vector<std::unique_ptr<Endpoint>> chips_, subs_;
  ShmBell* bell_;
  ShmBell* group_bell_ = nullptr;
  std::atomic<uint32_t>* group_countdowns_ = nullptr;
  // Reports a child's exit (Endpoint::exit_fd) by raising exit_seen_ and
  // ringing bell_; watched_: it runs, so the busy park needs no short slice.
  ExitWatch watch_;
  bool watched_ = false;
  std::atomic<bool> exit_seen_{false};

  std::mutex mu_;
  std::condition_variable cv_;  // run admission, heap space, drain
  std::shared_ptr<RunState> current_;
  uint64_t next_run_id_ = 1;
  bool closing_ = false;
  Status closing_status_;
  std::vector<std::deque<Task*>> chip_fifo_;
  std::deque<Task*> group_fifo_;
  std::deque<Task*> sub_fifo_;
  // Per chip: the tasks queued in its endpoint, oldest first (a group
  // appears in every target's queue). Per SUB: the one task in flight.
  std::vector<std::deque<Task*>> chip_q_;
  std::vector<int> chip_depth_;
  std::vector<Slot> sub_slot_;
  // Per chip, filled since the last flush: 0 no, 1 yes, 2 yes and the group
  // bell's ring reaches it; whether a group was queued.
  std::vector<uint8_t> chip_staged_;
  bool group_staged_ = false;
  // The node's GroupGates and, per gate, the tasks that hold it (its group
  // and the tasks waiting on it); free at 0.
  GroupGate* gates_ = nullptr;
  std::vector<int> gate_refs_ = std::vector<int>(kGroupGates, 0);
  int next_gate_ = 0;
  std::vector<bool> sub_dead_;
  int running_members_ = 0;
  HeapRing heap_;
  DepMap deps_;  // orchestrating thread (under mu_ for simplicity)

  std::atomic<bool> stop_{false};
  std::thread thread_;

  // Driving (EngineConfig::waiters_drive): threads now in drive(), whether
  // the scheduler thread stays aside with no driver (the last one left the
  // engine idle; under mu_ for writes), and the word it parks on.
  std::shared_ptr<DriveGate> gate_;
  std::atomic<int> drivers_{0};
  std::atomic<bool> aside_{false};
  std::atomic<uint64_t> scheduler_passes_{0};
  std::atomic<uint64_t> driver_parks_{0};
  std::atomic<uint32_t> recall_gen_{0};
  Waiter recall_waiter_;
};

}  // namespace taskring::node
