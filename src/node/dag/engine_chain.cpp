// Engine, batched dispatch: chip queues, chaining, and one flush per pass.
//
// A chip endpoint holds up to depth() tasks and runs them in the order they
// were queued. Two things fill a queue beyond one task:
// - a pass that finds several ready tasks for a chip queues them all, and
//   flush_staged() publishes them as one batch (one wake, one reply);
// - a pending chip task whose unfinished producers are all queued already
//   is queued behind them at once (try_chain). In-order execution on a chip
//   then keeps every dependency on that chip; a dependency between members
//   on different chips is kept only if it cannot matter: chaining requires
//   that no member touch a host byte another chip's queued producer member
//   writes, or write one it reads. The child skips a chained task whose
//   producer on its chip failed (TaskPayload::after), so a failure still
//   runs nothing downstream there; a chained group whose member was skipped
//   counts as skipped (Engine::finish).
// Groups are queued on all their chips in one step, under the engine's
// lock, so any two groups sit in the same order on every chip they share:
// a collective never waits for a peer queued behind a collective that waits
// for it. A queued task never waits for an unqueued one.
#include <algorithm>

#include "engine.hpp"

namespace taskring::node {

namespace {

struct HostRange {
  uint64_t lo, hi;
  bool writes;
};

// The host byte ranges a member touches (NO_DEP and DEVICE tensors are not
// tracked, as in DepMap); a bounding range per view.
std::vector<HostRange> host_ranges(const TaskPayload& p) {
  std::vector<HostRange> r;
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const ChipTensor& t = p.tensors[i];
    if (p.tags[i] == TensorArgType::NO_DEP || t.address_space != AddressSpace::HOST || t.extent_bytes() == 0) continue;
    r.push_back({t.data_addr(), t.data_addr() + t.extent_bytes(), p.tags[i] != TensorArgType::INPUT});
  }
  return r;
}

bool conflict(const TaskPayload& a, const TaskPayload& b) {
  const std::vector<HostRange> ra = host_ranges(a), rb = host_ranges(b);
  for (const HostRange& x : ra)
    for (const HostRange& y : rb)
      if ((x.writes || y.writes) && x.lo < y.hi && y.lo < x.hi) return true;
  return false;
}

}  // namespace

bool Engine::has_room(int chip) const {
  const auto c = static_cast<size_t>(chip);
  return chip_q_[c].size() < static_cast<size_t>(chip_depth_[c]);
}

bool Engine::chainable(const Task* t, std::vector<uint32_t>* after) const {
  after->assign(t->members.size(), 0);
  for (int c : t->targets)
    if (chip_depth_[static_cast<size_t>(c)] < 2 || !has_room(c)) return false;
  for (const Task* p : t->producers) {
    if (p->status == TaskStatus::kCompleted) continue;
    if (p->status != TaskStatus::kRunning || p->sub) return false;
    for (size_t j = 0; j < p->targets.size(); ++j) {
      const int d = p->targets[j];
      const auto& q = chip_q_[static_cast<size_t>(d)];
      const auto it = std::find(q.begin(), q.end(), p);
      if (it == q.end()) continue;  // that member finished
      for (size_t m = 0; m < t->targets.size(); ++m) {
        if (t->targets[m] == d)
          (*after)[m] |= 1u << static_cast<uint32_t>(q.end() - it - 1);
        else if (conflict(t->members[m], p->members[j]))
          return false;
      }
    }
  }
  return true;
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
  if (!chainable(t, &after)) return false;
  for (size_t m = 0; m < t->members.size(); ++m) t->members[m].after = after[m];
  const std::vector<int> targets = t->targets;
  launch(t, targets);
  return true;
}

void Engine::chain_consumers(Task* t) {
  // By index: a chained consumer's own consumers are chained recursively,
  // and nothing here changes t->consumers.
  for (size_t i = 0; i < t->consumers.size(); ++i) (void)try_chain(t->consumers[i]);
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
