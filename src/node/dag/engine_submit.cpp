// Engine, orchestrating-thread side: runs, submits, scopes, alloc, control.
#include <algorithm>
#include <exception>

#include "engine.hpp"

namespace taskring::node {

namespace {
constexpr size_t kMaxScopeDepth = 64;

// "SUB", "chip 3" or "chips 0,1" (the level's word), appended to `s`.
void append_targets(std::string& s, bool sub, std::span<const int> chips, const std::string& word) {
  if (sub) {
    s += "SUB";
    return;
  }
  s.append(word).append(chips.size() == 1 ? " " : "s ");
  for (size_t i = 0; i < chips.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(chips[i]);
  }
}
}  // namespace

std::shared_ptr<RunState> Engine::run_orchestration(const std::function<Status(Orchestrator&)>& orch,
                                                    DomainRegistry* domains, bool caller_waits) {
  Status err;
  std::shared_ptr<RunState> run = begin_run(&err);
  if (!run) {
    auto r = std::make_shared<RunState>();
    r->status = err;
    r->done.store(true, std::memory_order_release);
    return r;
  }
  Orchestrator o(this, run.get(), domains);
  Status st;
  try {
    st = orch ? orch(o) : invalid_argument(cfg_.api.worker + "::submit: empty orchestration function");
  } catch (const std::exception& e) {
    st = internal_error(std::string("the orchestration function threw: ") + e.what());
  } catch (...) {
    st = internal_error("the orchestration function threw a non-std exception");
  }
  end_orchestration(run.get(), st);
  if (gate_ && !caller_waits) {
    // Nobody drives this run now: the scheduler thread carries it.
    std::lock_guard<std::mutex> lk(mu_);
    if (!idle_locked()) recall_locked();
  }
  return run;
}

std::shared_ptr<RunState> Engine::begin_run(Status* error) {
  std::unique_lock<std::mutex> lk(mu_);
  const Deadline d = Deadline::after_ms(cfg_.run_admission_ms);
  while (current_ && !closing_) {
    recall_locked();  // the previous run needs the scheduler thread to end
    if (d.expired()) {
      *error = deadline_exceeded(cfg_.api.worker + "::submit: the previous run did not finish within " +
                                 std::to_string(cfg_.run_admission_ms) + " ms");
      return nullptr;
    }
    cv_.wait_for(lk, std::chrono::nanoseconds(std::min<uint64_t>(d.remaining_ns(), 100'000'000)));
  }
  if (closing_) {
    *error = closing_status_;
    return nullptr;
  }
  deps_.reset();
  auto run = std::make_shared<RunState>();
  run->gate = gate_;
  run->id = next_run_id_++;
  run->t_begin = mono_ns();
  current_ = run;
  return run;
}

void Engine::end_orchestration(RunState* run, const Status& st) {
  std::lock_guard<std::mutex> lk(mu_);
  run->orchestrating = false;
  run->t_orch_end = mono_ns();
  while (!run->scopes.empty()) {
    heap_.close_scope(run->scopes.back(), run->tasks.size());
    run->scopes.pop_back();
  }
  heap_.close_scope(0, run->tasks.size());
  if (!st.ok()) {
    Status e = st.with_context("orchestration function of run " + std::to_string(run->id));
    note_error(run, e);
    cancel_unstarted(run, run->first_error);
  }
  maybe_finish_run(run);
}

void Engine::note_error(RunState* run, const Status& s) {
  if (run->first_error.ok() && !s.ok()) {
    run->first_error = s;
    for (auto& abort : run->on_abort) abort();
  }
}

Status Engine::run_open(RunState* run) {
  std::lock_guard<std::mutex> lk(mu_);
  if (closing_) return closing_status_;
  return run->first_error;
}

void Engine::add_run_hooks(RunState* run, std::function<void()> on_abort,
                           std::function<Status(const RunFence&)> at_fence) {
  std::lock_guard<std::mutex> lk(mu_);
  if (!run->first_error.ok()) on_abort();  // the run failed while the caller worked
  run->on_abort.push_back(std::move(on_abort));
  run->at_fence.push_back(std::move(at_fence));
}

Status Engine::validate(bool sub, int callable, std::span<const ChipTaskArgs* const> args, std::span<const int> chips,
                        const std::string& what) {
  const auto& names = sub ? cfg_.sub_callables : cfg_.chip_callables;
  if (callable < 0 || callable >= static_cast<int>(names.size()))
    return not_found(what + ": " + (sub ? "SUB" : "chip") + " callable id " + std::to_string(callable) +
                     " is not registered (" + std::to_string(names.size()) + " registered)");
  if (args.empty()) return invalid_argument(what + ": a group needs at least one member");
  if (sub) {
    if (subs_.empty())
      return failed_precondition(what + ": " +
                                 (cfg_.api.sub_workers_setting.empty()
                                      ? cfg_.api.worker + " runs no SUB workers"
                                      : "the node has no SUB workers (" + cfg_.api.sub_workers_setting + ")"));
    if (args.size() > subs_.size())
      return invalid_argument(what + ": " + std::to_string(args.size()) + " members but only " +
                              std::to_string(subs_.size()) + " SUB workers");
  } else {
    if (chips.size() != args.size())
      return invalid_argument(what + ": " + std::to_string(args.size()) + " argument sets for " +
                              std::to_string(chips.size()) + " chips");
    for (size_t i = 0; i < chips.size(); ++i) {
      if (chips[i] < 0 || chips[i] >= this->chips())
        return out_of_range(what + ": " + cfg_.target_word + " " + std::to_string(chips[i]) + " is not in [0, " +
                            std::to_string(this->chips()) + ")");
      for (size_t j = 0; j < i; ++j)
        if (chips[j] == chips[i])
          return invalid_argument(what + ": " + cfg_.target_word + " " + std::to_string(chips[i]) +
                                  " appears twice in the group");
    }
  }
  for (size_t m = 0; m < args.size(); ++m) {
    const ChipTaskArgs* a = args[m];
    // The names are built for an error only: two strings per tensor were a
    // quarter of a collective's submit (callgrind).
    auto who = [&] { return args.size() > 1 ? what + " member " + std::to_string(m) : what; };
    if (a == nullptr) return invalid_argument(who() + ": null arguments");
    if (a->has_error()) return invalid_argument(who() + ": " + a->error_msg());
    if (a->dependency_count() > 0)
      return unimplemented(who() +
                           ": explicit dependencies (set_dependencies) are not supported at L3; "
                           "tag the tensors instead");
    for (int i = 0; i < a->tensor_count(); ++i) {
      auto arg = [&] { return who() + ": argument " + std::to_string(i); };
      const TensorArgType tag = a->tag(i);
      if (tag == TensorArgType::OUTPUT)
        return invalid_argument(arg() +
                                " is OUTPUT (TensorCreateInfo); allocate it with Orchestrator::alloc and "
                                "pass it with add_output(ChipTensor)");
      const ChipTensor& t = *a->tensor(i);
      Status v = t.validate();
      if (!v.ok()) return invalid_argument(arg() + ": " + v.message());
      const bool writes = tag == TensorArgType::INOUT || tag == TensorArgType::OUTPUT_EXISTING;
      if (cfg_.check_tensor) {
        Status c = cfg_.check_tensor(t);
        if (!c.ok()) return Status(c.code(), arg() + ": " + c.message());
      } else if (t.address_space == AddressSpace::DEVICE) {
        if (sub) return invalid_argument(arg() + " is a DEVICE tensor; SUB workers take host tensors only");
        continue;
      }
      if (!cfg_.check_tensor && t.extent_bytes() > 0 && !cfg_.host_visible(t.data_addr(), t.extent_bytes()))
        return invalid_argument(arg() + " (" + t.describe() +
                                ") is not in the node's shared heap, so no child can see it; allocate it with " +
                                cfg_.api.worker + "::alloc_shared or Orchestrator::alloc");
      if (!sub && writes && !t.is_contiguous)
        return invalid_argument(arg() + " (" + t.describe() +
                                ") is a non-contiguous view a chip task writes; a chip writes back whole byte "
                                "ranges, which would overwrite the gaps: pass a contiguous view");
    }
  }
  return Status::Ok();
}

Status Engine::submit(RunState* run, bool sub, int callable, std::span<const ChipTaskArgs* const> args,
                      std::span<const int> chips, const char* api) {
  std::string what;
  what.reserve(96);  // one allocation for the name every message of the task uses
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!run->first_error.ok()) return run->first_error;
    if (!run->orchestrating) return failed_precondition(std::string(api) + ": the run's orchestration has ended");
    what.append(api).append(" task ").append(std::to_string(run->tasks.size())).append(" (");
    append_targets(what, sub, chips, cfg_.target_word);
  }
  const auto& names = sub ? cfg_.sub_callables : cfg_.chip_callables;
  if (callable >= 0 && callable < static_cast<int>(names.size()))
    what.append(", callable '").append(names[callable]).append("'");
  what += ')';
  Status v = validate(sub, callable, args, chips, what);
  if (!v.ok()) {
    std::lock_guard<std::mutex> lk(mu_);
    note_error(run, v);
    cancel_unstarted(run, run->first_error);
    return v;
  }

  auto task = std::make_unique<Task>();
  task->sub = sub;
  task->group = args.size() > 1;
  task->callable = callable;
  task->what = what;
  if (!sub) task->targets.assign(chips.begin(), chips.end());
  std::vector<ChipTensor> all_tensors;
  std::vector<TensorArgType> all_tags;
  size_t total = 0;
  for (const ChipTaskArgs* a : args) total += static_cast<size_t>(a->tensor_count());
  all_tensors.reserve(total);
  all_tags.reserve(total);
  task->members.resize(args.size());
  for (size_t m = 0; m < args.size(); ++m) {
    const ChipTaskArgs& a = *args[m];
    TaskPayload& p = task->members[m];
    p.callable = callable;
    p.tensors.reserve(static_cast<size_t>(a.tensor_count()));
    p.tags.reserve(static_cast<size_t>(a.tensor_count()));
    for (int i = 0; i < a.tensor_count(); ++i) {
      p.tensors.push_back(*a.tensor(i));
      p.tags.push_back(a.tag(i));
    }
    p.scalars.assign(a.scalars(), a.scalars() + a.scalar_count());
    all_tensors.insert(all_tensors.end(), p.tensors.begin(), p.tensors.end());
    all_tags.insert(all_tags.end(), p.tags.begin(), p.tags.end());
  }

  std::vector<uint64_t> producers;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!run->first_error.ok()) return run->first_error;
    Task* t = task.get();
    t->index = run->tasks.size();
    deps_.add_task(t->index, all_tensors, all_tags, &producers);
    std::sort(producers.begin(), producers.end());
    producers.erase(std::unique(producers.begin(), producers.end()), producers.end());
    Status poisoned;
    for (uint64_t pi : producers) {
      Task* p = run->tasks[pi].get();
      switch (p->status) {
        case TaskStatus::kCompleted: break;
        case TaskStatus::kFailed:
        case TaskStatus::kSkipped:
          if (poisoned.ok()) poisoned = aborted(what + " skipped: its producer " + p->what + " did not complete");
          break;
        default:
          ++t->fanin;
          p->consumers.push_back(t);
          t->producers.push_back(p);
      }
    }
    run->tasks.push_back(std::move(task));
    ++run->counts.submitted;
    ++run->unfinished;
    if (!poisoned.ok()) {
      t->status = TaskStatus::kPending;
      skip(t, poisoned);
    } else if (t->fanin == 0) {
      t->status = TaskStatus::kReady;
      if (t->sub)
        sub_fifo_.push_back(t);
      else if (t->group)
        group_fifo_.push_back(t);
      else
        chip_fifo_[static_cast<size_t>(t->targets[0])].push_back(t);
    } else {
      t->status = TaskStatus::kPending;
      (void)try_chain(t);  // behind its producers, if they are all queued
    }
    if (cfg_.waiters_drive) {
      // The orchestrating thread dispatches what is ready itself: no wake
      // of the scheduler thread for it.
      drain_completions(false);
      dispatch();
    } else {
      flush_staged();
    }
  }
  if (!cfg_.waiters_drive || !watched_) bell_ring(*bell_);
  return Status::Ok();
}

Status Engine::scope_begin(RunState* run) {
  std::lock_guard<std::mutex> lk(mu_);
  if (!run->orchestrating) return failed_precondition("scope_begin: the run's orchestration has ended");
  if (run->scopes.size() >= kMaxScopeDepth)
    return failed_precondition("scope_begin: scopes nest at most " + std::to_string(kMaxScopeDepth) + " deep");
  run->scopes.push_back(run->next_scope++);
  return Status::Ok();
}

Status Engine::scope_end(RunState* run) {
  std::lock_guard<std::mutex> lk(mu_);
  if (run->scopes.empty()) return failed_precondition("scope_end without a matching scope_begin");
  heap_.close_scope(run->scopes.back(), run->tasks.size());
  run->scopes.pop_back();
  heap_.release(run->retired);
  return Status::Ok();
}

Expected<ChipTensor> Engine::alloc(RunState* run, std::span<const uint32_t> shapes, DataType dtype) {
  if (shapes.empty() || shapes.size() > MAX_TENSOR_DIMS)
    return invalid_argument("Orchestrator::alloc: " + std::to_string(shapes.size()) + " dims; 1.." +
                            std::to_string(MAX_TENSOR_DIMS) + " accepted");
  uint64_t numel = 1;
  for (uint32_t s : shapes) {
    if (s != 0 && numel > UINT64_MAX / s) return invalid_argument("Orchestrator::alloc: element count overflows");
    numel *= s;
  }
  const uint64_t bytes = numel * element_size(dtype);
  std::unique_lock<std::mutex> lk(mu_);
  if (!run->orchestrating) return failed_precondition("Orchestrator::alloc: the run's orchestration has ended");
  if (bytes > heap_.capacity()) {
    Status e = resource_exhausted(
        "Orchestrator::alloc: " + std::to_string(bytes) + " B exceeds the whole heap ring (" +
        std::to_string(heap_.capacity()) + " B); " +
        (cfg_.api.heap_setting.empty() ? cfg_.api.worker + " has no heap ring" : "raise " + cfg_.api.heap_setting));
    note_error(run, e);
    return e;
  }
  const uint32_t scope = run->scopes.empty() ? 0 : run->scopes.back();
  const Deadline d = Deadline::after_ms(cfg_.heap_wait_ms);
  while (true) {
    if (!run->first_error.ok()) return run->first_error;
    if (auto p = heap_.try_alloc(bytes, scope)) {
      lk.unlock();
      return make_tensor_external(reinterpret_cast<void*>(static_cast<uintptr_t>(*p)), shapes.data(),
                                  static_cast<uint32_t>(shapes.size()), dtype);
    }
    if (d.expired()) {
      Status e = deadline_exceeded("Orchestrator::alloc: heap ring full: " + std::to_string(bytes) + " B requested, " +
                                   std::to_string(heap_.in_use()) + " of " + std::to_string(heap_.capacity()) +
                                   " B still in use after " + std::to_string(cfg_.heap_wait_ms) + " ms; raise " +
                                   cfg_.api.heap_setting + " or end scopes earlier so blocks retire");
      note_error(run, e);
      cancel_unstarted(run, e);
      return e;
    }
    recall_locked();  // completions free what this waits for
    cv_.wait_for(lk, std::chrono::nanoseconds(std::min<uint64_t>(d.remaining_ns(), 50'000'000)));
  }
}

Status Engine::drain_submitted(RunState* run, const std::string& api) {
  std::unique_lock<std::mutex> lk(mu_);
  const Deadline d = Deadline::after_ms(cfg_.run_admission_ms);
  while (run->unfinished != 0) {
    if (closing_) return closing_status_;
    if (!run->first_error.ok()) return run->first_error;
    if (d.expired())
      return deadline_exceeded(api + ": " + std::to_string(run->unfinished) +
                               " task(s) submitted earlier in this run did not finish within " +
                               std::to_string(cfg_.run_admission_ms) +
                               " ms; a chip serves this call only between its tasks");
    recall_locked();  // completions free what this waits for
    cv_.wait_for(lk, std::chrono::nanoseconds(std::min<uint64_t>(d.remaining_ns(), 50'000'000)));
  }
  return Status::Ok();
}

Expected<uint64_t> Engine::control(int chip, const ControlRequest& req, const char* api) {
  if (chip < 0 || chip >= chips())
    return out_of_range(std::string(api) + ": chip " + std::to_string(chip) + " is not in [0, " +
                        std::to_string(chips()) + ")");
  auto r = chips_[static_cast<size_t>(chip)]->control(req, Deadline::after_ms(cfg_.control_timeout_ms));
  if (!r.ok()) return r.status().with_context(api);
  return r;
}

}  // namespace taskring::node
