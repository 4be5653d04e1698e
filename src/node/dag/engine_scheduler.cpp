// Engine, scheduler side: the loop, dispatch, completions, poisoning, run end.
#include <sched.h>

#include <algorithm>

#include "engine.hpp"
#include "taskring/log/strace.hpp"

namespace taskring::node {

namespace {
// Park slices: short while work is in flight and no ExitWatch reports
// deaths (a dead child must surface within 10 ms), long when idle (nothing
// can complete) or when every endpoint's exit is watched.
constexpr uint64_t kBusySliceNs = 2'000'000;
constexpr uint64_t kIdleSliceNs = 50'000'000;
constexpr uint32_t kSchedulerSpin = 2000;

namespace strace = log::strace;

// Yields the CPU in a loop until `bell`'s epoch moves from `seen`, `done()`
// holds (true), or `ns` or the deadline pass (false). Never a sleep: each
// sched_yield returns at once when no other thread wants this CPU.
template <typename Done>
bool yield_until_rung(const ShmBell& bell, uint32_t seen, uint64_t ns, Deadline deadline, Done&& done) {
  const uint64_t end = std::min(mono_ns() + ns, deadline.at_mono_ns);
  do {
    if (bell.epoch.load(std::memory_order_acquire) != seen || done()) return true;
    sched_yield();
  } while (mono_ns() < end);
  return false;
}
}  // namespace

Engine::Engine(EngineConfig config, std::vector<std::unique_ptr<Endpoint>> chips,
               std::vector<std::unique_ptr<Endpoint>> subs, ShmBell* bell)
    : cfg_(std::move(config)),
      chips_(std::move(chips)),
      subs_(std::move(subs)),
      bell_(bell),
      chip_fifo_(chips_.size()),
      chip_q_(chips_.size()),
      sub_slot_(subs_.size()),
      chip_staged_(chips_.size(), 0),
      sub_dead_(subs_.size(), false),
      heap_(cfg_.heap_base, cfg_.heap_bytes) {
  // The child's TaskPayload::after mask names predecessors up to 32 back.
  for (auto& ep : chips_) chip_depth_.push_back(std::clamp(ep->depth(), 1, 32));
  if (cfg_.waiters_drive) {
    gate_ = std::make_shared<DriveGate>();
    gate_->engine = this;
  }
}

Engine::~Engine() { shutdown(aborted("the node engine was destroyed"), Deadline::after_ms(0)); }

void Engine::start() {
  if (thread_.joinable()) return;
  stop_.store(false);
  std::vector<int> fds;
  for (auto* eps : {&chips_, &subs_})
    for (auto& ep : *eps) fds.push_back(ep->exit_fd());
  const bool every_exit_visible = std::none_of(fds.begin(), fds.end(), [](int fd) { return fd < 0; });
  if (every_exit_visible && !fds.empty()) {
    // A stopped child never exits and never answers: the watcher's tick
    // kills one that stays stopped past the stall timeout, and a chip whose
    // task runs past the task timeout (its serving thread stuck inside the
    // task); the exit then fails the task like any death. Each limit is
    // seen within a quarter of itself.
    const uint64_t stall_ms = cfg_.stall_timeout_ms, task_ms = cfg_.task_timeout_ms;
    uint64_t tick_ms = 0;
    for (uint64_t limit : {stall_ms, task_ms})
      if (limit != 0) tick_ms = std::min(tick_ms == 0 ? UINT64_MAX : tick_ms, std::max<uint64_t>(50, limit / 4));
    auto on_tick = [this, stall_ms, task_ms] {
      const uint64_t now = mono_ns();
      if (stall_ms != 0)
        for (auto* eps : {&chips_, &subs_})
          for (auto& ep : *eps) ep->watch_stall(stall_ms * 1'000'000, now, cfg_.stall_knob);
      if (task_ms != 0)
        for (auto& ep : chips_) ep->watch_task(task_ms * 1'000'000, now, cfg_.task_timeout_knob);
    };
    watched_ = watch_
                   .start(
                       std::move(fds),
                       [this](size_t) {
                         exit_seen_.store(true, std::memory_order_release);
                         bell_ring(*bell_);
                       },
                       tick_ms, tick_ms == 0 ? std::function<void()>{} : std::function<void()>(on_tick))
                   .ok();
  }
  thread_ = std::thread([this] { scheduler_loop(); });
}

Engine::Pass Engine::pass(uint64_t* last_check) {
  const uint64_t now = mono_ns();
  // waitpid on every busy child when one exited, else at most once per slice.
  const bool exited = exit_seen_.exchange(false, std::memory_order_acq_rel);
  const bool check_liveness = exited || now - *last_check >= (watched_ ? kIdleSliceNs : kBusySliceNs);
  if (check_liveness) *last_check = now;
  Pass p;
  std::lock_guard<std::mutex> lk(mu_);
  p.progressed = drain_completions(check_liveness);
  p.progressed |= dispatch();
  p.busy = any_busy();
  return p;
}

void Engine::scheduler_loop() {
  uint64_t last_check = 0;
  while (!stop_.load(std::memory_order_acquire)) {
    if (drivers_.load(std::memory_order_acquire) > 0 || aside_.load(std::memory_order_acquire)) {
      park_aside();
      continue;
    }
    const uint32_t seen = bell_->epoch.load(std::memory_order_seq_cst);
    const Pass p = pass(&last_check);
    scheduler_passes_.fetch_add(1, std::memory_order_relaxed);
    if (p.progressed) continue;
    bool moved = false;
    // Nothing in flight: nothing can ring soon, so no spin.
    const uint32_t spin = p.busy ? std::min(kSchedulerSpin, bell_->spin) : 0;
    for (uint32_t i = 0; i < spin && !moved; ++i) {
      moved = bell_->epoch.load(std::memory_order_acquire) != seen || stop_.load(std::memory_order_relaxed);
      Waiter::spin_pause(i);
    }
    if (moved) continue;
    bell_->parked.fetch_add(1, std::memory_order_seq_cst);
    if (bell_->epoch.load(std::memory_order_seq_cst) == seen && !stop_.load(std::memory_order_seq_cst) &&
        drivers_.load(std::memory_order_seq_cst) == 0)
      bell_park(*bell_, seen, p.busy && !watched_ ? kBusySliceNs : kIdleSliceNs);
    bell_->parked.fetch_sub(1, std::memory_order_relaxed);
  }
}

void Engine::park_aside() {
  const uint32_t gen = recall_gen_.load(std::memory_order_seq_cst);
  const Status s = recall_waiter_.wait(
      [&] { return recall_gen_.load(std::memory_order_seq_cst) != gen || stop_.load(std::memory_order_seq_cst); },
      Deadline::after_ns(kIdleSliceNs), "a recall", 0);
  // An idle slice passed with no driver: carry the engine again (a bound on
  // how long a run nobody waits for can sit still, whatever was missed).
  if (!s.ok() && drivers_.load(std::memory_order_acquire) == 0) aside_.store(false, std::memory_order_release);
}

void Engine::recall_locked() {
  aside_.store(false, std::memory_order_seq_cst);
  recall_gen_.fetch_add(1, std::memory_order_seq_cst);
  recall_waiter_.notify_all();
}

Status Engine::wait_run(RunState& run, Deadline deadline) {
  if (run.gate) {
    DriveGate& g = *run.gate;
    Engine* e = nullptr;
    {
      std::lock_guard<std::mutex> lk(g.mu);
      e = g.engine;
      if (e != nullptr) ++g.inside;
    }
    if (e != nullptr) {
      Status s = e->drive(run, deadline);
      std::lock_guard<std::mutex> lk(g.mu);
      if (--g.inside == 0) g.left.notify_all();
      if (run.done.load(std::memory_order_acquire) || s.code() == StatusCode::kDeadlineExceeded) return s;
    }
  }
  // No engine to drive (L4, or it shut down): its run ends by a notify.
  TASKRING_RETURN_IF_ERROR(
      run.waiter.wait([&] { return run.done.load(std::memory_order_acquire); }, deadline, "the node run to finish"));
  return run.status;
}

void Engine::nudge(RunState& run) {
  if (!run.gate || run.done.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lk(run.gate->mu);
  if (Engine* e = run.gate->engine; e != nullptr && e->aside_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> elk(e->mu_);
    e->recall_locked();
  }
}

Status Engine::drive(RunState& run, Deadline deadline) {
  drivers_.fetch_add(1, std::memory_order_seq_cst);
  uint64_t last_check = 0;
  auto finished = [&] { return run.done.load(std::memory_order_acquire) || stop_.load(std::memory_order_acquire); };
  while (!finished()) {
    const uint32_t seen = bell_->epoch.load(std::memory_order_seq_cst);
    const Pass p = pass(&last_check);
    if (finished() || deadline.expired()) break;
    if (p.progressed) continue;
    bool moved = false;
    const uint32_t spin = std::min(kSchedulerSpin, bell_->spin);
    for (uint32_t i = 0; i < spin && !moved; ++i) {
      moved = bell_->epoch.load(std::memory_order_acquire) != seen || finished();
      Waiter::spin_pause(i);
    }
    // No spin budget (oversubscribed): yield, then park (EngineConfig::driver_yield_ns).
    if (!moved && spin == 0 && p.busy && cfg_.driver_yield_ns > 0)
      moved = yield_until_rung(*bell_, seen, cfg_.driver_yield_ns, deadline, finished);
    if (moved) continue;
    bell_->parked.fetch_add(1, std::memory_order_seq_cst);
    if (bell_->epoch.load(std::memory_order_seq_cst) == seen && !finished()) {
      driver_parks_.fetch_add(1, std::memory_order_relaxed);
      bell_park(*bell_, seen, std::min(deadline.remaining_ns(), p.busy && !watched_ ? kBusySliceNs : kIdleSliceNs));
    }
    bell_->parked.fetch_sub(1, std::memory_order_relaxed);
  }
  {
    // The last driver out leaves the scheduler thread aside only when
    // nothing is left for it to carry.
    std::lock_guard<std::mutex> lk(mu_);
    if (drivers_.fetch_sub(1, std::memory_order_seq_cst) == 1) {
      if (idle_locked() && !stop_.load(std::memory_order_acquire))
        aside_.store(true, std::memory_order_release);
      else
        recall_locked();
    }
  }
  if (run.done.load(std::memory_order_acquire)) return run.status;
  if (stop_.load(std::memory_order_acquire)) return Status::Ok();  // wait_run falls back to the waiter
  return deadline_exceeded("deadline passed while waiting for the node run to finish");
}

bool Engine::any_busy() const { return running_members_ > 0; }

bool Engine::drain_completions(bool check_liveness) {
  bool any = false;
  for (size_t c = 0; c < chips_.size(); ++c) {
    auto& q = chip_q_[c];
    while (!q.empty()) {
      auto o = chips_[c]->poll(check_liveness);
      if (!o) break;
      Task* t = q.front();
      q.pop_front();
      member_done(t, *o);
      any = true;
    }
  }
  for (size_t s = 0; s < subs_.size(); ++s) {
    Task* t = sub_slot_[s].task;
    if (t == nullptr) continue;
    if (auto o = subs_[s]->poll(check_liveness)) {
      sub_slot_[s].task = nullptr;
      if (o->kind == OutcomeKind::kEndpointFailure) sub_dead_[s] = true;
      member_done(t, *o);
      any = true;
    }
  }
  return any;
}

bool Engine::dispatch() {
  bool any = dispatch_groups();
  any |= dispatch_singles();
  any |= dispatch_subs();
  flush_staged();
  return any;
}

void Engine::launch(Task* t, const std::vector<int>& targets) {
  t->status = TaskStatus::kRunning;
  t->targets = targets;
  RunState* run = current_.get();
  if (run != nullptr && run->t_first_dispatch == 0) run->t_first_dispatch = mono_ns();
  // All members are handed over before any result is read, and a group's
  // chips are woken by one ring of the group bell (flush_staged), so they
  // start together.
  const bool grouped = group_bell_ != nullptr && !t->sub && targets.size() > 1;
  // While nothing else waits for a chip, only the group's last member (or a
  // failed one) wakes this thread: earlier wake-ups would run it on a CPU
  // the remaining members need. The slot is the first target's, which no
  // other running group holds: every target's queue is empty.
  bool queues_empty = true;
  for (int c : targets) queues_empty &= t->sub || chip_q_[static_cast<size_t>(c)].empty();
  int32_t countdown = -1;
  if (grouped && queues_empty && group_countdowns_ != nullptr && nothing_waits_for_chips(targets)) {
    countdown = targets[0];
    group_countdowns_[countdown].store(static_cast<uint32_t>(targets.size()), std::memory_order_relaxed);
  }
  if (!t->sub) take_gate(t);
  for (size_t m = 0; m < targets.size(); ++m) {
    t->members[m].wait_gate = t->wait_gate;
    t->members[m].done_gate = t->gate;
    Endpoint& ep = t->sub ? *subs_[static_cast<size_t>(targets[m])] : *chips_[static_cast<size_t>(targets[m])];
    Status s = t->sub ? ep.start(t->index, t->members[m]) : ep.start_staged(t->index, t->members[m], countdown);
    ++t->running;
    ++running_members_;
    if (!s.ok()) {
      // Not started, so it will not count down: do it here, so the last
      // started member still rings.
      if (countdown >= 0) group_countdowns_[countdown].fetch_sub(1, std::memory_order_relaxed);
      if (t->sub) sub_dead_[static_cast<size_t>(targets[m])] = true;
      member_done(t, Outcome{OutcomeKind::kEndpointFailure, s.with_context("dispatching " + t->what)});
      continue;
    }
    const auto target = static_cast<size_t>(targets[m]);
    if (t->sub) {
      sub_slot_[target].task = t;
      continue;
    }
    chip_q_[target].push_back(t);
    chip_staged_[target] = std::max<uint8_t>(chip_staged_[target], grouped ? 2 : 1);
  }
  group_staged_ |= grouped;
  if (!t->sub) chain_consumers(t);
}

bool Engine::nothing_waits_for_chips(const std::vector<int>& chips) const {
  for (const Task* g : group_fifo_)
    if (g->status == TaskStatus::kReady) return false;
  for (int c : chips)
    for (const Task* t : chip_fifo_[static_cast<size_t>(c)])
      if (t->status == TaskStatus::kReady) return false;
  return true;
}

bool Engine::dispatch_groups() {
  bool any = false;
  while (!group_fifo_.empty()) {
    Task* t = group_fifo_.front();
    if (t->status != TaskStatus::kReady) {
      group_fifo_.pop_front();
      continue;
    }
    // A group needs every target healthy: a dead member would leave its
    // peers waiting on it (a collective would hang), so none is started.
    Status dead;
    for (int c : t->targets) {
      Status h = chips_[static_cast<size_t>(c)]->health();
      if (!h.ok()) {
        dead = h;
        break;
      }
    }
    if (!dead.ok()) {
      group_fifo_.pop_front();
      t->status = TaskStatus::kRunning;
      ++t->running;
      ++running_members_;
      member_done(t, Outcome{OutcomeKind::kEndpointFailure, dead.with_context("dispatching " + t->what)});
      any = true;
      continue;
    }
    int wait_gate = -1;
    if (!group_fits(t, &wait_gate)) return any;  // the head keeps its reservation
    for (int c : t->targets)
      if (!has_room(c)) return any;
    group_fifo_.pop_front();
    t->wait_gate = wait_gate;
    launch(t, t->targets);
    any = true;
  }
  return any;
}

bool Engine::dispatch_singles() {
  bool any = false;
  // The group head reserves its chips: a single task may not take them.
  std::vector<bool> reserved(chips_.size(), false);
  for (Task* g : group_fifo_) {
    if (g->status != TaskStatus::kReady) continue;
    for (int c : g->targets) reserved[static_cast<size_t>(c)] = true;
    break;
  }
  for (size_t c = 0; c < chips_.size(); ++c) {
    auto& q = chip_fifo_[c];
    while (!reserved[c] && has_room(static_cast<int>(c))) {
      while (!q.empty() && q.front()->status != TaskStatus::kReady) q.pop_front();
      if (q.empty()) break;
      Task* t = q.front();
      q.pop_front();
      launch(t, {static_cast<int>(c)});
      any = true;
    }
  }
  return any;
}

bool Engine::dispatch_subs() {
  bool any = false;
  while (!sub_fifo_.empty()) {
    Task* t = sub_fifo_.front();
    if (t->status != TaskStatus::kReady) {
      sub_fifo_.pop_front();
      continue;
    }
    const size_t need = t->members.size();
    size_t alive = 0;
    std::vector<int> idle;
    for (size_t s = 0; s < subs_.size(); ++s) {
      if (sub_dead_[s]) continue;
      ++alive;
      if (sub_slot_[s].task == nullptr && idle.size() < need) idle.push_back(static_cast<int>(s));
    }
    if (alive < need) {
      sub_fifo_.pop_front();
      t->status = TaskStatus::kRunning;
      ++t->running;
      ++running_members_;
      member_done(
          t, Outcome{OutcomeKind::kEndpointFailure, unavailable(t->what + ": needs " + std::to_string(need) +
                                                                " SUB workers, " + std::to_string(alive) + " alive")});
      any = true;
      continue;
    }
    if (idle.size() < need) break;  // FIFO: the head waits for enough SUBs
    sub_fifo_.pop_front();
    launch(t, idle);
    any = true;
  }
  return any;
}

void Engine::expect_work(std::span<const int> chips) {
  for (int c : chips) chip_endpoint(c).expect_work();
  if (group_bell_ != nullptr) bell_ring(*group_bell_);
}

void Engine::member_done(Task* t, const Outcome& o) {
  --t->running;
  --running_members_;
  t->not_run |= o.kind == OutcomeKind::kNotRun;
  if (o.kind == OutcomeKind::kEndpointFailure && t->gate >= 0) {
    // A member that never finishes never counts down: open the gate as
    // failed, so the group queued behind this one is not run.
    gates_[t->gate].failed.store(1, std::memory_order_release);
    bell_ring(*group_bell_);
  }
  // The run's error names the task (its index, chips and callable).
  auto named = [&] {
    return o.status.with_context(t->group ? t->what + " (group of " + std::to_string(t->members.size()) + ")"
                                          : t->what);
  };
  if (o.kind == OutcomeKind::kNotRun) {
    // Never the run's error: the failure it follows is, and it is drained
    // too (it rang the parent), whichever chip the parent polls first.
    if (t->not_run_why.ok()) t->not_run_why = named();
  } else if (!o.status.ok() && t->error.ok()) {
    t->error = named();
    // A failed member while others still run (a collective): the run's
    // error now, so its comm domains abort and the peers waiting for this
    // member end instead of running into their deadlines.
    if (t->running > 0 && current_) note_error(current_.get(), t->error);
  }
  if (t->running == 0) finish(t, t->error.ok() ? t->not_run_why : t->error);
  if (running_members_ == 0) cv_.notify_all();
}

void Engine::finish(Task* t, const Status& s) {
  RunState* run = current_.get();
  release_gates(t);
  if (s.ok()) {
    t->status = TaskStatus::kCompleted;
    ++run->counts.completed;
    deps_.mark_completed(t->index);
    for (Task* c : t->consumers) {
      if (c->status != TaskStatus::kPending) continue;
      if (--c->fanin > 0) {
        (void)try_chain(c);  // its other producers may all be queued now
      } else {
        c->status = TaskStatus::kReady;
        if (c->sub)
          sub_fifo_.push_back(c);
        else if (c->group)
          group_fifo_.push_back(c);
        else
          chip_fifo_[static_cast<size_t>(c->targets[0])].push_back(c);
      }
    }
  } else if (t->not_run && t->error.ok()) {
    // Queued behind a task that failed (engine_chain.cpp): it did not run
    // (where a member ran, it succeeded), so it counts as skipped, as it
    // would had it waited.
    t->status = TaskStatus::kSkipped;
    t->error = s;
    ++run->counts.skipped;
    poison_consumers(t, aborted(t->what + " skipped"));
  } else {
    t->status = TaskStatus::kFailed;
    ++run->counts.failed;
    note_error(run, s);
    poison_consumers(t, aborted(t->what + " failed"));
  }
  --run->unfinished;
  t->consumers.clear();
  retire(run);
  maybe_finish_run(run);
}

void Engine::skip(Task* t, const Status& why) {
  if (t->status != TaskStatus::kPending && t->status != TaskStatus::kReady) return;
  RunState* run = current_.get();
  t->status = TaskStatus::kSkipped;
  t->error = why;
  ++run->counts.skipped;
  --run->unfinished;
  poison_consumers(t, why);
  t->consumers.clear();
}

void Engine::poison_consumers(Task* t, const Status& cause) {
  // Iterative: a long chain must not recurse once per task.
  std::vector<Task*> stack(t->consumers.begin(), t->consumers.end());
  RunState* run = current_.get();
  while (!stack.empty()) {
    Task* c = stack.back();
    stack.pop_back();
    if (c->status != TaskStatus::kPending && c->status != TaskStatus::kReady) continue;
    c->status = TaskStatus::kSkipped;
    c->error = cause;
    ++run->counts.skipped;
    --run->unfinished;
    stack.insert(stack.end(), c->consumers.begin(), c->consumers.end());
    c->consumers.clear();
  }
}

void Engine::cancel_unstarted(RunState* run, const Status& why) {
  for (auto& t : run->tasks) skip(t.get(), why);
  retire(run);
}

void Engine::retire(RunState* run) {
  while (run->retired < run->tasks.size()) {
    TaskStatus s = run->tasks[run->retired]->status;
    if (s != TaskStatus::kCompleted && s != TaskStatus::kFailed && s != TaskStatus::kSkipped) break;
    ++run->retired;
  }
  if (heap_.release(run->retired)) cv_.notify_all();
}

void Engine::emit_run_spans(const RunState& run) const {
  const uint64_t inv = strace::alloc_invocation();
  const std::string run_name = cfg_.span_family + ".run";
  const uint64_t hid = strace::fnv1a64(run_name.c_str());
  const uint64_t d0 = run.t_first_dispatch ? run.t_first_dispatch : run.t_orch_end;
  // The run's three records in one write(2) (SpanBatch): one write each
  // cost an L4 remote task's round trip 2.2 us of its 4.3 (docs/l4.md).
  strace::SpanBatch spans;
  spans.add((run_name + ".orch").c_str(), static_cast<int64_t>(run.t_begin),
            static_cast<int64_t>(run.t_orch_end - run.t_begin), inv, hid, 1,
            strace::Attrs{{"tasks", run.counts.submitted}});
  spans.add((run_name + ".dispatch").c_str(), static_cast<int64_t>(d0),
            static_cast<int64_t>(run.t_last_done >= d0 ? run.t_last_done - d0 : 0), inv, hid, 1,
            strace::Attrs{{"completed", run.counts.completed}});
  spans.add(run_name.c_str(), static_cast<int64_t>(run.t_begin), static_cast<int64_t>(run.t_last_done - run.t_begin),
            inv, hid, 0, strace::Attrs{{"run", run.id}, {"ok", run.status.ok() ? 1 : 0}});
}

void Engine::maybe_finish_run(RunState* run) {
  if (run->orchestrating || run->unfinished != 0 || run->done.load(std::memory_order_relaxed)) return;
  run->t_last_done = mono_ns();
  heap_.clear();
  // The completion fence: nothing of the run runs any more, so what it
  // borrowed can go (whether it passed or failed). The hooks word their
  // errors themselves (what was released).
  while (!run->at_fence.empty()) {
    Status s = run->at_fence.back()(RunFence{!run->first_error.ok(), closing_});
    run->at_fence.pop_back();
    if (!s.ok()) note_error(run, s);
  }
  if (cfg_.at_every_fence) {
    Status s = cfg_.at_every_fence(RunFence{!run->first_error.ok(), closing_});
    if (!s.ok()) note_error(run, s);
  }
  run->on_abort.clear();
  run->status = run->first_error;
  if (strace::enabled()) emit_run_spans(*run);
  run->done.store(true, std::memory_order_release);
  run->waiter.notify_all();
  if (current_.get() == run) current_.reset();
  cv_.notify_all();
}

void Engine::shutdown(const Status& why, Deadline drain) {
  std::unique_lock<std::mutex> lk(mu_);
  if (!closing_) {
    closing_ = true;
    closing_status_ = why;
  }
  recall_locked();  // the drain below needs the scheduler thread
  if (current_) {
    note_error(current_.get(), why);
    cancel_unstarted(current_.get(), why);
  }
  bell_ring(*bell_);
  while (running_members_ > 0 && thread_.joinable() && !drain.expired())
    cv_.wait_for(lk, std::chrono::nanoseconds(std::min<uint64_t>(drain.remaining_ns(), 50'000'000)));
  lk.unlock();
  stop_.store(true, std::memory_order_release);
  bell_ring(*bell_);
  {
    std::lock_guard<std::mutex> elk(mu_);
    recall_locked();
  }
  if (gate_) {
    // Drivers see stop_ within a park slice; none may be inside once the
    // engine can go away.
    std::unique_lock<std::mutex> glk(gate_->mu);
    gate_->engine = nullptr;
    while (gate_->inside > 0) {
      bell_ring(*bell_);
      gate_->left.wait_for(glk, std::chrono::milliseconds(10));
    }
  }
  if (thread_.joinable()) thread_.join();
  watch_.stop();
  lk.lock();
  // Whatever still runs will never be polled again.
  for (auto& q : chip_q_) {
    while (!q.empty()) {
      Task* t = q.front();
      q.pop_front();
      if (current_)
        member_done(t, Outcome{OutcomeKind::kEndpointFailure, why.with_context(t->what + " still running")});
    }
  }
  for (Slot& sl : sub_slot_) {
    if (sl.task == nullptr) continue;
    Task* t = sl.task;
    sl.task = nullptr;
    if (current_) member_done(t, Outcome{OutcomeKind::kEndpointFailure, why.with_context(t->what + " still running")});
  }
  if (current_ && !current_->orchestrating) maybe_finish_run(current_.get());
}

}  // namespace taskring::node
