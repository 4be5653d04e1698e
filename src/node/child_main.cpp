#include "child_main.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <ctime>
#include <memory>
#include <optional>

#include "domain_member.hpp"
#include "taskring/base/clock.hpp"
#include "taskring/base/cpus.hpp"
#include "taskring/log/strace.hpp"

namespace taskring::node {

namespace {

constexpr uint64_t kOrphanCheckNs = 100'000'000;  // PDEATHSIG is the fast path
// How long a chip stays awake after attaching a comm domain or a wake hint;
// see serve().
constexpr uint64_t kLingerNs = 500'000;
// Checks of a group gate before parking (wait_gate).
constexpr uint32_t kGateSpin = 4000;
// Nice levels a child runs below the parent when they outnumber the CPUs.
constexpr int kOversubscribedNice = 3;

[[noreturn]] void leave(int code) {
  log::strace::flush_strace();
  _exit(code);
}

Status parent_alive(pid_t parent) {
  if (getppid() != parent) return aborted("parent died");
  return Status::Ok();
}

class ChildServer {
 public:
  explicit ChildServer(const ChildSpec& s) : s_(s), m_(*s.mailbox) {}

  Status init() {
    if (s_.pin_slot >= 0) {
      auto cpu = pin_to_cpu_slot(s_.pin_slot);
      if (!cpu.ok()) return cpu.status().with_context("pinning chip " + std::to_string(s_.index));
    }
    if (s_.hook) TASKRING_RETURN_IF_ERROR(s_.hook(s_.kind, s_.index));
    if (s_.kind != ChildKind::kChip) return Status::Ok();
    if (s_.exchange != nullptr) domains_ = std::make_unique<DomainMembership>(s_.exchange, s_.comm_socket);
    ChipWorkerConfig c;
    c.runtime = s_.runtime;
    const std::string rank = std::to_string(s_.rank_base + s_.index);
    const std::string threads = std::to_string(s_.sim_threads);
    const std::string run_inline = s_.run_inline ? "1" : "0";
    EnvLookup base = s_.env;
    c.env = [base, rank, threads, run_inline](std::string_view name) -> std::optional<std::string> {
      if (name == "TASKRING_RANK") return rank;
      if (name == "TASKRING_SIM_THREADS") return threads;
      if (name == "TASKRING_RUN_INLINE") return run_inline;
      return base ? base(name) : std::nullopt;
    };
    auto w = ChipWorker::create(c);
    if (!w.ok()) return w.status().with_context("creating the ChipWorker");
    chip_ = std::move(*w);
    for (const ChipCallable& cc : *s_.chip_callables) {
      auto id = chip_->register_callable(cc);
      if (!id.ok()) return id.status().with_context("registering chip callable '" + cc.name + "'");
      ids_.push_back(*id);
    }
    return Status::Ok();
  }

  [[noreturn]] void serve() {
    while (true) {
      auto work = [&] {
        return m_.shutdown.load(std::memory_order_acquire) != 0 || task_ready() ||
               load_control_state(m_) == ControlState::kRequest || m_.wake_hint.load(std::memory_order_relaxed) != 0;
      };
      auto alive = [&] { return parent_alive(s_.parent_pid); };
      Status w = s_.group_bell != nullptr
                     ? bell_wait_either(m_.child_bell, *s_.group_bell, work, alive, Deadline{}, "work", kOrphanCheckNs)
                     : bell_wait(m_.child_bell, work, alive, Deadline{}, "work", kOrphanCheckNs);
      if (!w.ok() || m_.shutdown.load(std::memory_order_acquire) != 0) leave(w.ok() ? 0 : 1);
      bool linger = m_.wake_hint.exchange(0, std::memory_order_acq_rel) != 0;
      if (load_control_state(m_) == ControlState::kRequest) {
        linger |= m_.op == ControlOp::kAttachDomain;
        serve_control();
      }
      if (task_ready()) serve_tasks();
      // A domain is attached (or a cached one reused, which the parent
      // hints) right before the group that uses it: stay awake for it,
      // yielding the CPU to whoever needs it, instead of parking. A parked
      // chip starts that group only once the group bell's wake reaches it,
      // on a vCPU that may have halted meanwhile: measured on the 8-chip MoE
      // step, the members' start skew fell from 315 to 180 us and the step
      // from ~590 to ~500 us. Bounded: it parks after kLingerNs.
      if (linger) {
        const Deadline until = Deadline::after_ns(kLingerNs);
        while (!work() && !until.expired()) sched_yield();
      }
    }
  }

 private:
  bool task_ready() const { return load_task_state(m_.tasks[next_ % kTaskSlots]) == TaskState::kReady; }

  // Runs the queued tasks in order, as long as the parent keeps queueing.
  // The parent learns of a batch's end with one ring: after the last task
  // the child finds queued, and at once after a failure (the run's error
  // aborts the comm domains its peers may wait in). A task whose `after`
  // names a failed (or not run) predecessor is not run.
  void serve_tasks() {
    // Only a chip's tasks are watched (LocalEndpoint::watch_task): a SUB
    // child skips the start stamps (a clock read and two stores per task).
    const bool watched = s_.kind == ChildKind::kChip;
    while (task_ready()) {
      TaskSlot& t = m_.tasks[next_ % kTaskSlots];
      ++next_;
      if (watched) t.started_ns.store(0, std::memory_order_relaxed);
      store_task_state(t, TaskState::kRunning);
      // Read before the final state: from then on the parent may reuse the slot.
      const int32_t countdown = t.countdown, done_gate = t.done_gate;
      Status s = (t.after & failed_before_) == 0
                     ? wait_gate(t.wait_gate)
                     : aborted("not run: a task queued before it on this worker did not complete");
      const bool run = s.ok();
      if (run) {
        // The parent's task watch counts from here: a group gate's wait is
        // the earlier group's time, not this task's.
        if (watched) t.started_ns.store(mono_ns(), std::memory_order_release);
        s = run_task(t);
      }
      const bool ok = run && s.ok();
      failed_before_ = (failed_before_ << 1) | (ok ? 0u : 1u);
      t.result.store(s);
      store_task_state(t, run ? TaskState::kDone : TaskState::kNotRun);
      m_.finished.fetch_add(1, std::memory_order_release);
      // After TASK_DONE: the member that rings for the group (below) orders
      // every member's TASK_DONE before its ring through the gate's count.
      const bool last_of_group = finish_gate(done_gate, ok);
      // A group member that is not the last to finish leaves the parent
      // asleep: waking it would only take a CPU from the members still
      // running, and it polls every member when the last one rings.
      // The same for a queued group (its gate): the group is done, and its
      // consumers can go, only when its last member finishes.
      const bool last_member = finish_rings_parent(s_.group_countdowns, countdown, ok) && last_of_group;
      if (!ok || (last_member && !task_ready())) bell_ring(*s_.parent_bell);
    }
  }

  // Waits until the group this task must follow finished on every chip
  // (TaskSlot::wait_gate): spins briefly (its last member usually finishes
  // on another CPU at about the same time), then parks on the group bell,
  // which that member rings. Bounded like the serve loop: the parent's
  // death or a shutdown ends it.
  Status wait_gate(int32_t g) {
    if (g < 0 || s_.group_gates == nullptr || s_.group_bell == nullptr) return Status::Ok();
    GroupGate& gate = s_.group_gates[g];
    auto open = [&] {
      return gate.remaining.load(std::memory_order_acquire) == 0 || gate.failed.load(std::memory_order_acquire) != 0 ||
             m_.shutdown.load(std::memory_order_acquire) != 0;
    };
    for (uint32_t i = 0; i < kGateSpin && !open(); ++i) Waiter::spin_pause(i);
    if (!open()) {
      Status w = bell_wait_either(
          m_.child_bell, *s_.group_bell, open, [&] { return parent_alive(s_.parent_pid); }, Deadline{},
          "the group queued before this task", kOrphanCheckNs);
      if (!w.ok()) return w;
    }
    if (gate.failed.load(std::memory_order_acquire) != 0)
      return aborted("not run: the group queued before it on its chips did not complete");
    if (m_.shutdown.load(std::memory_order_acquire) != 0) return aborted("not run: the worker is closing");
    return Status::Ok();
  }

  // This task was a member of the group counted by GroupGate `g`: whether
  // it was the last member to finish (true without a gate).
  bool finish_gate(int32_t g, bool ok) {
    if (g < 0 || s_.group_gates == nullptr) return true;
    GroupGate& gate = s_.group_gates[g];
    if (!ok) gate.failed.store(1, std::memory_order_release);
    const uint32_t before = gate.remaining.fetch_sub(1, std::memory_order_acq_rel);
    if ((before == 1 || !ok) && s_.group_bell != nullptr) bell_ring(*s_.group_bell);
    return before == 1;
  }

  Status run_task(TaskSlot& m) {
    const int nt = m.tensor_count, ns = m.scalar_count;
    ChipTaskArgs args;
    for (int i = 0; i < nt; ++i) {
      m.tensors[i] = rebase_host_view(m.tensors[i]);
      args.add_tensor(m.tensors[i], static_cast<TensorArgType>(m.tags[i]));
    }
    args.add_scalars(m.scalars, ns);
    if (args.has_error()) return invalid_argument(std::string("task arguments: ") + args.error_msg());
    if (s_.kind == ChildKind::kSub) {
      const auto& fns = *s_.sub_functions;
      if (m.callable < 0 || m.callable >= static_cast<int>(fns.size()))
        return not_found("SUB callable id " + std::to_string(m.callable) + " is not registered");
      return fns[static_cast<size_t>(m.callable)](args);
    }
    if (m.callable < 0 || m.callable >= static_cast<int>(ids_.size()))
      return not_found("chip callable id " + std::to_string(m.callable) + " is not registered");
    // The serving thread waits for the run anyway: it orchestrates it too
    // (and runs a one-task run itself); a task that hangs there is ended by
    // the parent's task watch (LocalEndpoint::watch_task).
    RunConfig rc;
    rc.orchestrate_here = true;
    auto r = chip_->run(ids_[static_cast<size_t>(m.callable)], args, rc);
    if (r.ok()) m_.run_totals.add(*r);  // published by the TASK_DONE store that follows
    return r.status();
  }

  void serve_control() {
    store_control_state(m_, ControlState::kRunning);
    uint64_t value = 0;
    Status s = run_control(&value);
    m_.control_value = value;
    store_status(s, &m_.control_code, &m_.control_length, m_.control_message);
    store_control_state(m_, ControlState::kDone);
    bell_ring(*s_.parent_bell);
  }

  Status run_control(uint64_t* value) {
    const uint64_t* a = m_.control_args;
    if (m_.op == ControlOp::kNoop) {
      // Holds the control frame for a[0] ns: the probe the mailbox bench
      // and the dies-during-a-control-call test use; a[2] (if set) is a
      // shared flag raised once the frame is held.
      if (a[2] != 0)
        reinterpret_cast<std::atomic<uint32_t>*>(static_cast<uintptr_t>(a[2]))->store(1, std::memory_order_release);
      if (a[0] > 0) {
        timespec ts{static_cast<time_t>(a[0] / 1000000000ull), static_cast<long>(a[0] % 1000000000ull)};
        while (nanosleep(&ts, &ts) != 0) {
        }
      }
      *value = a[1];
      return Status::Ok();
    }
    if (!chip_)
      return unimplemented("SUB workers have no device memory (control op " +
                           std::to_string(static_cast<uint32_t>(m_.op)) + ")");
    Device& d = chip_->device();
    switch (m_.op) {
      case ControlOp::kMalloc: {
        auto p = d.malloc(a[0], 1024, "node malloc");
        if (!p.ok()) return p.status();
        *value = *p;
        return Status::Ok();
      }
      case ControlOp::kFree: return d.free(a[0]);
      case ControlOp::kCopyTo:
        return d.copy_to_device(a[0], reinterpret_cast<const void*>(static_cast<uintptr_t>(a[1])), a[2]);
      case ControlOp::kCopyFrom:
        return d.copy_from_device(reinterpret_cast<void*>(static_cast<uintptr_t>(a[0])), a[1], a[2]);
      case ControlOp::kAttachDomain: {
        if (!domains_) return failed_precondition("this chip cannot join comm domains");
        auto base = domains_->attach(a);
        if (!base.ok()) return base.status();
        *value = *base;
        return Status::Ok();
      }
      case ControlOp::kReleaseDomain:
        if (!domains_) return failed_precondition("this chip cannot join comm domains");
        return domains_->release(a[0]);
      default: return invalid_argument("unknown control op " + std::to_string(static_cast<uint32_t>(m_.op)));
    }
  }

  const ChildSpec& s_;
  Mailbox& m_;
  std::unique_ptr<ChipWorker> chip_;
  std::unique_ptr<DomainMembership> domains_;
  std::vector<int> ids_;
  uint64_t next_ = 0;           // the next slot to run (counter, modulo kTaskSlots)
  uint32_t failed_before_ = 0;  // bit k: the task run k+1 tasks ago failed or was not run
};

}  // namespace

ChipTensor rebase_host_view(const ChipTensor& t) {
  if (t.address_space != AddressSpace::HOST) return t;
  ChipTensor r = t;
  r.buffer.addr = t.data_addr();
  r.buffer.size = t.extent_bytes();
  r.start_offset = 0;
  return r;
}

void child_main(const ChildSpec& spec) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != spec.parent_pid) _exit(1);  // the parent died before the prctl
  for (int fd : spec.foreign_sockets) close(fd);
  Mailbox& m = *spec.mailbox;
  // Processes that outnumber the CPUs (the node parks idle waiters then:
  // spin 0): a child yields a contended CPU to the parent, whose
  // orchestration and scheduling feed every child. Without it, the children
  // a cached domain's hint wakes preempted the parent in the middle of its
  // orchestration: 8-chip MoE step, node.run.orch 0.65-0.71x and node.run
  // 0.92-0.95x with the children at nice +3, the chips' own windows
  // unchanged (docs/node.md). Relative, so it never needs a privilege.
  if (m.child_bell.spin == 0) (void)setpriority(PRIO_PROCESS, 0, getpriority(PRIO_PROCESS, 0) + kOversubscribedNice);
  ChildServer server(spec);
  Status s = server.init();
  if (!s.ok()) {
    m.init_result.store(s);
    m.init_state.store(static_cast<uint32_t>(InitState::kFailed), std::memory_order_release);
    bell_ring(*spec.parent_bell);
    leave(1);
  }
  m.init_state.store(static_cast<uint32_t>(InitState::kReady), std::memory_order_release);
  bell_ring(*spec.parent_bell);
  server.serve();
}

}  // namespace taskring::node
