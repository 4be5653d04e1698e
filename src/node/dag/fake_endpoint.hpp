// FakeEndpoint: an in-process Endpoint for the engine's unit tests.
//
// start() asks `behaviour` what to do with the task: an Outcome completes it
// (reported at the next poll), nullopt holds it until the test calls
// finish(). kill() turns the endpoint into a dead one, as a child killed by
// a signal would be. Every state change rings the engine's bell and the
// fake's own waiter, so tests wait on conditions with deadlines, never sleep.
// With `depth` > 1 it queues tasks like LocalEndpoint: outcomes are reported
// in start order (finish() completes the oldest held one), a task whose
// TaskPayload::after names a failed or not-run predecessor is not run
// (OutcomeKind::kNotRun), and flushes() counts the batches published.
#pragma once

#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "endpoint.hpp"
#include "taskring/base/waiter.hpp"

namespace taskring::node {

class FakeEndpoint final : public Endpoint {
 public:
  using Behaviour = std::function<std::optional<Outcome>(const TaskPayload&)>;

  FakeEndpoint(std::string name, ShmBell* bell, Behaviour behaviour = {}, int depth = 1)
      : name_(std::move(name)), bell_(bell), behaviour_(std::move(behaviour)), depth_(depth) {}

  std::string name() const override { return name_; }
  int depth() const override { return depth_; }

  Status start(uint64_t task_id, const TaskPayload& task) override {
    std::optional<Outcome> now;
    if (behaviour_)
      now = behaviour_(task);
    else
      now = Outcome{};
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (!dead_.ok()) return dead_;
      if (static_cast<int>(queue_.size()) >= depth_) return failed_precondition(name_ + ": queue full");
      started_.push_back(task);
      started_ids_.push_back(task_id);
      queue_.push_back(Entry{task.after, now});
      settle();
    }
    changed();
    return Status::Ok();
  }

  // Records `countdown` (countdowns()); starts at once, and always rings.
  Status start_staged(uint64_t task_id, const TaskPayload& task, int32_t countdown) override {
    {
      std::lock_guard<std::mutex> lk(mu_);
      countdowns_.push_back(countdown);
      ++unflushed_;
    }
    return start(task_id, task);
  }

  // Counts a batch when anything was staged since the last flush.
  void flush(bool) override {
    std::lock_guard<std::mutex> lk(mu_);
    if (unflushed_ == 0) return;
    batch_sizes_.push_back(unflushed_);
    unflushed_ = 0;
  }

  std::optional<Outcome> poll(bool) override {
    std::lock_guard<std::mutex> lk(mu_);
    ++polls_;
    waiter_.notify_all();  // wait_polls
    if (queue_.empty() || !queue_.front().outcome) return std::nullopt;
    auto o = queue_.front().outcome;
    queue_.pop_front();
    ++finished_;
    waiter_.notify_all();
    return o;
  }
  // Returns args[1] (a domain attach: the rank, as the member's base).
  Expected<uint64_t> control(const ControlRequest& req, Deadline) override {
    std::lock_guard<std::mutex> lk(mu_);
    ++controls_;
    if (!dead_.ok()) return dead_;
    return req.args[1];
  }
  int control_requests() {
    std::lock_guard<std::mutex> lk(mu_);
    return controls_;
  }
  Status control_post(const ControlRequest& req) override {
    posted_ = control(req, Deadline{});
    return Status::Ok();
  }
  Expected<uint64_t> control_wait(Deadline) override { return posted_; }

  // Counts the hints (work_hints()).
  void expect_work() override {
    std::lock_guard<std::mutex> lk(mu_);
    ++hints_;
  }
  int work_hints() {
    std::lock_guard<std::mutex> lk(mu_);
    return hints_;
  }

  Status health() override {
    std::lock_guard<std::mutex> lk(mu_);
    return dead_;
  }

  // Completes the oldest held task with `o`.
  void finish(Outcome o = {}) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      for (Entry& e : queue_) {
        if (e.outcome) continue;
        e.outcome = std::move(o);
        break;
      }
      settle();
    }
    changed();
  }
  void kill(Status why) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      dead_ = why;
      for (Entry& e : queue_)
        if (!e.outcome) e.outcome = Outcome{OutcomeKind::kEndpointFailure, why};
    }
    changed();
  }

  // Waits until at least `n` tasks started / were reported finished.
  Status wait_started(size_t n, Deadline d) {
    return waiter_.wait([&] { return started_count() >= n; }, d, "fake endpoint start");
  }
  Status wait_finished(size_t n, Deadline d) {
    return waiter_.wait([&] { return finished_count() >= n; }, d, "fake endpoint finish");
  }
  // Waits until the engine polled this endpoint at least `n` times.
  Status wait_polls(uint64_t n, Deadline d) {
    return waiter_.wait([&] { return poll_count() >= n; }, d, "fake endpoint poll");
  }
  uint64_t poll_count() {
    std::lock_guard<std::mutex> lk(mu_);
    return polls_;
  }
  size_t started_count() {
    std::lock_guard<std::mutex> lk(mu_);
    return started_.size();
  }
  size_t finished_count() {
    std::lock_guard<std::mutex> lk(mu_);
    return finished_;
  }
  std::vector<TaskPayload> started() {
    std::lock_guard<std::mutex> lk(mu_);
    return started_;
  }
  // The number of tasks of each flushed batch, in order.
  std::vector<int> batch_sizes() {
    std::lock_guard<std::mutex> lk(mu_);
    return batch_sizes_;
  }
  // The countdown slot of every staged start, in order.
  std::vector<int32_t> countdowns() {
    std::lock_guard<std::mutex> lk(mu_);
    return countdowns_;
  }

 private:
  // A queued task runs once every task before it has an outcome (in order,
  // as a child runs its queue): one whose `after` names a failure is not run.
  void settle() {
    for (Entry& e : queue_) {
      if (e.settled) continue;
      if ((e.after & history_) != 0)
        e.outcome =
            Outcome{OutcomeKind::kNotRun, aborted(name_ + ": not run: a task queued before it did not complete")};
      else if (!e.outcome)
        return;
      e.settled = true;
      const bool ok = e.outcome->kind == OutcomeKind::kSuccess;
      history_ = (history_ << 1) | (ok ? 0u : 1u);
    }
  }
  struct Entry {
    uint32_t after = 0;
    std::optional<Outcome> outcome;
    bool settled = false;
  };
  void changed() {
    waiter_.notify_all();
    bell_ring(*bell_);
  }
  std::string name_;
  ShmBell* bell_;
  Behaviour behaviour_;
  std::mutex mu_;
  Waiter waiter_;
  Status dead_;
  int depth_;
  std::deque<Entry> queue_;
  uint32_t history_ = 0;  // bit k: the task settled k+1 before failed or was not run
  int unflushed_ = 0;
  std::vector<int> batch_sizes_;
  std::vector<TaskPayload> started_;
  std::vector<uint64_t> started_ids_;
  std::vector<int32_t> countdowns_;
  size_t finished_ = 0;
  uint64_t polls_ = 0;
  int hints_ = 0;
  int controls_ = 0;
  Expected<uint64_t> posted_{uint64_t{0}};
};

}  // namespace taskring::node
