// Engine, batched dispatch: chip queues, chaining, group gates, and one
// flush per pass.
//
// A chip endpoint holds up to depth() tasks and runs them in the order they
// were queued. Three things fill a queue beyond one task:
// - a pass that finds several ready tasks for a chip queues them all, and
//   flush_staged() publishes them as one batch (one wake, one reply);
// - a group is queued behind the group before it on the same chips (a
//   run's collectives on one domain): its members start only once that
//   group finished on every chip (its GroupGate, mailbox.hpp), so
//   collectives still run one after another, as when each waited for idle
//   chips, but without a round trip through this process between them;
// - a pending chip task whose unfinished producers are all queued already
//   is queued behind them at once (try_chain). Its chip's order keeps the
//   dependencies on that chip; a producer group's members elsewhere are
//   kept by waiting on the gate of the last group in the queue. Producers
//   queued on other chips outside that keep it pending.
// The child skips a chained task whose producer on its chip failed
// (TaskPayload::after), or whose gate failed, so a failure still runs
// nothing downstream; a chained task that was not run somewhere counts as
// skipped (Engine::finish). Groups are queued on all their chips in one
// step, under the engine's lock, so any two groups sit in the same order on
// every chip they share, and a queued task waits only for tasks queued
// before it: nothing queued can wait in a cycle.
#include <algorithm>

#include "engine.hpp"

namespace taskring::node {

bool Engine::has_room(int chip) const {
  const auto c = static_cast<size_t>(chip);
  return chip_q_[c].size() < static_cast<size_t>(chip_depth_[c]);
}

bool Engine::group_fits(const Task* t, int* wait_gate) const {
  *wait_gate = -1;
  const Task* prev = nullptr;
  for (int c : t->targets) {
    const auto& q = chip_q_[static_cast<size_t>(c)];
    if (q.empty()) continue;
    if (gates_ == nullptr || (prev != nullptr && q.back() != prev)) return false;
    prev = q.back();
  }
  if (prev == nullptr) return true;
  if (!prev->group || prev->gate < 0 || prev->targets.size() != t->targets.size()) return false;
  for (int c : t->targets)
    if (std::find(prev->targets.begin(), prev->targets.end(), c) == prev->targets.end()) return false;
  *wait_gate = prev->gate;
  return true;
}

bool Engine::chainable(const Task* t, std::vector<uint32_t>* after, int* wait_gate) const {
  after->assign(t->members.size(), 0);
  *wait_gate = -1;
  for (int c : t->targets)
    if (chip_depth_[static_cast<size_t>(c)] < 2 || !has_room(c)) return false;
  if (t->group && !group_fits(t, wait_gate)) return false;
  bool needs_gate = false;  // a single task behind a producer group
  for (const Task* p : t->producers) {
    if (p->status == TaskStatus::kCompleted) continue;
    if (p->status != TaskStatus::kRunning || p->sub) return false;
    for (size_t j = 0; j < p->targets.size(); ++j) {
      const int d = p->targets[j];
      const auto& q = chip_q_[static_cast<size_t>(d)];
      const auto it = std::find(q.begin(), q.end(), p);
      if (it == q.end()) continue;  // that member finished
      const auto m = std::find(t->targets.begin(), t->targets.end(), d) - t->targets.begin();
      if (static_cast<size_t>(m) == t->targets.size()) {
        // Queued on a chip this task does not run on: only a producer
        // group's gate can keep that order.
        if (t->group || !p->group) return false;
        needs_gate = true;
        continue;
      }
      (*after)[static_cast<size_t>(m)] |= 1u << static_cast<uint32_t>(q.end() - it - 1);
      needs_gate |= p->group && !t->group;
    }
  }
  if (!needs_gate) return true;
  // Groups in a chip's queue follow one another through their gates: the
  // last one's gate opens after every earlier one finished everywhere.
  const auto& q = chip_q_[static_cast<size_t>(t->targets[0])];
  for (auto it = q.rbegin(); it != q.rend(); ++it) {
    if (!(*it)->group) continue;
    *wait_gate = (*it)->gate;
    return *wait_gate >= 0;
  }
  return false;
}

bool Engine::try_chain(Task* t) {
  if (t->sub || t->status != TaskStatus::kPending || t->fanin == 0) return false;
  RunState* run = current_.get();
  if (closing_ || run == nullptr || !run->first_error.ok()) return false;
  // A ready group at the head of its FIFO reserves its chips (see
  // dispatch_singles): chaining must not take the room it waits for.
  for (const Task* g : group_fifo_) {
    if (g->status != TaskStatus::kReady) continue;
    for (int c : g->targets)
      if (std::find(t->targets.begin(), t->targets.end(), c) != t->targets.end()) return false;
    break;
  }
  std::vector<uint32_t> after;
  int wait_gate = -1;
  if (!chainable(t, &after, &wait_gate)) return false;
  for (size_t m = 0; m < t->members.size(); ++m) t->members[m].after = after[m];
  t->wait_gate = wait_gate;
  const std::vector<int> targets = t->targets;
  launch(t, targets);
  return true;
}

void Engine::chain_consumers(Task* t) {
  // By index: a chained consumer's own consumers are chained recursively,
  // and nothing here changes t->consumers.
  for (size_t i = 0; i < t->consumers.size(); ++i) (void)try_chain(t->consumers[i]);
}

void Engine::take_gate(Task* t) {
  if (t->wait_gate >= 0) ++gate_refs_[static_cast<size_t>(t->wait_gate)];
  if (gates_ == nullptr || !t->group) return;
  for (int i = 0; i < kGroupGates; ++i) {
    const int g = (next_gate_ + i) % kGroupGates;
    if (gate_refs_[static_cast<size_t>(g)] != 0) continue;
    next_gate_ = (g + 1) % kGroupGates;
    ++gate_refs_[static_cast<size_t>(g)];
    gates_[g].failed.store(0, std::memory_order_relaxed);
    // Published by the slot's TASK_READY store (release) of each member.
    gates_[g].remaining.store(static_cast<uint32_t>(t->members.size()), std::memory_order_relaxed);
    t->gate = g;
    return;
  }
}

void Engine::release_gates(Task* t) {
  for (int* g : {&t->gate, &t->wait_gate}) {
    if (*g >= 0) --gate_refs_[static_cast<size_t>(*g)];
    *g = -1;
  }
}

void Engine::flush_staged() {
  for (size_t c = 0; c < chips_.size(); ++c) {
    if (chip_staged_[c] == 0) continue;
    chips_[c]->flush(chip_staged_[c] == 1);
    chip_staged_[c] = 0;
  }
  if (group_staged_) {
    group_staged_ = false;
    bell_ring(*group_bell_);
  }
}

}  // namespace taskring::node
