// The orchestrator's side of tmr: scopes and submit (dependencies from the
// TensorMap and explicit ids, a slot and its ring's room, then wiring onto
// producers' fanout lists).
#include <algorithm>
#include <cstring>
#include <vector>

#include "l2/element_access.hpp"
#include "l2/submit_checks.hpp"
#include "sanitize/arg_tag.hpp"
#include "task_name.hpp"
#include "taskring/base/clock.hpp"
#include "tmr_runtime.hpp"

namespace taskring::tmr {

// ---------------------------------------------------------------- scopes

void TmrRuntime::scope_begin(PTO2ScopeMode mode) {
  if (scopes_.size() >= static_cast<size_t>(PTO2_MAX_SCOPE_DEPTH)) {
    report_fatal(PTO2_ERROR_INVALID_ARGS, "scope_begin: more than " + std::to_string(PTO2_MAX_SCOPE_DEPTH) +
                                              " nested scopes (PTO2_MAX_SCOPE_DEPTH)");
    scopes_.push_back(Scope{mode, scope_tasks_.size()});  // keep begin/end balanced
    return;
  }
  if (mode == PTO2ScopeMode::AUTO && !scopes_.empty() && scopes_.back().mode == PTO2ScopeMode::MANUAL) {
    report_fatal(PTO2_ERROR_INVALID_ARGS, "scope_begin: an AUTO scope inside a MANUAL scope is not allowed");
  }
  // A scope inside a MANUAL scope stays manual.
  if (!scopes_.empty() && scopes_.back().mode == PTO2ScopeMode::MANUAL) mode = PTO2ScopeMode::MANUAL;
  scopes_.push_back(Scope{mode, scope_tasks_.size()});
}

void TmrRuntime::scope_end() {
  if (scopes_.empty()) {
    report_fatal(PTO2_ERROR_INVALID_ARGS, "scope_end: no open scope");
    return;
  }
  Scope s = scopes_.back();
  scopes_.pop_back();
  // The scope's references go in one pass, and each ring advances once for
  // the slots they consumed: not a lock and a fence per task.
  bool consumed[kRingLevels] = {};
  for (size_t i = s.first_task; i < scope_tasks_.size(); ++i) {
    TaskSlot* t = scope_tasks_[i];
    const uint8_t r = t->ring;
    rings_[r].pinned_by_open_scopes--;
    if (release_deferred(t)) consumed[r] = true;
  }
  // Orders the consumed marks before the look at each ring's advance lock
  // (the other side of TaskRing::advance's fence after its unlock): an
  // advancer that holds the lock now re-checks and finds them.
  if (!tasks_here_) std::atomic_thread_fence(std::memory_order_seq_cst);
  for (int r = 0; r < kRingLevels; ++r) {
    if (consumed[r]) advance_ring(rings_[r]);
  }
  scope_tasks_.resize(s.first_task);
  // Once kInlineDrainLive tasks are live, the orchestrating thread runs what
  // is ready now, while this scope's slots, arguments and map entries are
  // still in cache, instead of running further ahead. Inline, nothing else
  // runs tasks: filling the 16384-task window first kept every map entry live
  // and every line cold by the time it ran (2x per independent task). A
  // threaded run's executors fall that far behind only when they do not get
  // the CPUs (a busy neighbour, more threads than CPUs): the orchestrator then
  // works beside them (as executor 0's helper: not with profiling or the
  // sanitizer on, whose records are per executor). Below the mark, the rings
  // fill and drain as before.
  if (tasks_here_ || (config_.profile == nullptr && config_.sanitizer == nullptr)) {
    uint64_t live = 0;
    for (const TaskRing& r : rings_) live += r.next_seq - r.last_alive.load(std::memory_order_acquire);
    if (live >= kInlineDrainLive) run_ready_here();
  }
}

// ---------------------------------------------------------------- submit

void TmrRuntime::fail_args(const char* what, const std::string& detail) {
  report_fatal(PTO2_ERROR_INVALID_ARGS, std::string(what) + ": " + detail);
}

TaskSlot* TmrRuntime::slot_of(PTO2TaskId id) {
  if (!id.is_valid() || id.ring() >= static_cast<uint32_t>(kRingLevels)) return nullptr;
  TaskRing& ring = rings_[id.ring()];
  TaskSlot& s = ring.slots[id.local() & (ring.window - 1)];
  // Only the orchestrator reuses slots, so on this thread an id match means
  // the task still owns its slot.
  return s.id == id ? &s : nullptr;
}

void TmrRuntime::add_producer(Producer* list, int* n, TaskSlot* slot, PTO2TaskId id, uint8_t flags) {
  for (int i = 0; i < *n; ++i) {
    if (list[i].slot == slot) {
      list[i].flags |= flags;
      return;
    }
  }
  if (*n >= kMaxRetainedProducers) {
    // More distinct producers than a task can track: serialise through the
    // conservative path would drop edges, so it is a fatal error instead.
    report_fatal(PTO2_ERROR_INVALID_ARGS, "submit: more than " + std::to_string(kMaxRetainedProducers) +
                                              " distinct producer tasks for one task");
    return;
  }
  // Field by field: as one aggregate, GCC spilled the two words to the stack
  // and reloaded them as one 16-byte vector, a store-to-load forwarding stall
  // that was ~7 % of an inline chain task (perf, cpu-clock samples).
  Producer& p = list[(*n)++];
  p.slot = slot;
  p.id = id;
  p.flags = flags;
}

// Submit, in the order its steps run: check, collect producers, allocate,
// materialise, register, wire. Each step after allocate() works on the slot
// it returned; the first failure latches the run's fatal error.
TaskOutputTensors TmrRuntime::submit(const MixedKernels& kernels, const CoreTaskArgs& args, l2::SubmitKind kind) {
  TaskOutputTensors result;
  if (is_fatal()) return result;
  const char* op = l2::submit_op_name(kind);
  l2::TaskShape shape = l2::TaskShape::kDummy;
  exec::ResolvedPredicate predicate;
  if (!check(kernels, args, kind, &shape, &predicate)) return result;
  const int nt = args.tensor_count();
  uint64_t heap_bytes = 0;
  for (int i = 0; i < nt; ++i) {
    if (args.tag(i) == TensorArgType::OUTPUT) heap_bytes += l2::output_heap_bytes(*args.create_info(i));
  }
  const bool manual_scope = scopes_.back().mode == PTO2ScopeMode::MANUAL;

  // Left uninitialised: PTO2TaskId's default member initialiser would make a
  // plain array cost kMaxRetainedProducers stores on every submit (~200
  // instructions, a fifth of a chain submit); only [0, np) is ever read.
  union ProducerBuffer {
    ProducerBuffer() {}
    Producer at[kMaxRetainedProducers];
  } buffer;
  int retaining = 0;
  const int np = collect_producers(args, manual_scope, buffer.at, &retaining);
  if (is_fatal()) return result;

  uint32_t ring_index = static_cast<uint32_t>(std::min<size_t>(scopes_.size() - 1, kRingLevels - 1));
  TaskRing& ring = rings_[ring_index];
  Allocation at;
  if (!allocate(ring, heap_bytes, static_cast<uint64_t>(np), ArgLayout::of(nt, args.scalar_count(), retaining), &at))
    return result;
  TaskSlot* t = at.slot;
  ++submitted_;
  if (kind == l2::SubmitKind::kAllocOnly)
    ++stats_.alloc_tasks;
  else if (kind != l2::SubmitKind::kKernel)
    ++stats_.dummy_tasks;
  else
    ++stats_.kernel_tasks;
  stats_.heap_bytes += heap_bytes;

  materialize(t, ring, at, kernels, args, kind, shape, predicate, op, &result);
  if (!manual_scope) register_accesses(t, args);
  const int32_t unused = wire(t, ring.dep_nodes + at.pool_off, buffer.at, np);
  scope_tasks_.push_back(t);
  ring.pinned_by_open_scopes++;

  if (kind == l2::SubmitKind::kAllocOnly) {
    // Completes at once: no kernel, and its outputs live until its scope
    // and retaining consumers let go.
    l2::LocalReady<TaskSlot> here;  // not an executor: what it readies goes to the shared queues
    if (sub_fetch(t->fanin_pending, 1 + unused, tasks_here_) == 0) finish_task(t, &here);
    if (here.next != nullptr) push_ready(here.next);
    return result;
  }
  if (sub_fetch(t->fanin_pending, 1 + unused, tasks_here_) == 0) {
    if (tasks_here_)
      run_now(t);
    else
      push_ready(t);
  }
  return result;
}

// Step 1: the submit's arguments are admissible (l2/submit_checks.hpp)
// and its dispatch predicate, if any, resolves.
bool TmrRuntime::check(const MixedKernels& kernels, const CoreTaskArgs& args, l2::SubmitKind kind,
                       l2::TaskShape* shape, exec::ResolvedPredicate* predicate) {
  if (!l2::plainly_admissible(kind, !scopes_.empty(), kernels, args, policy_, shape)) {
    l2::SubmitError bad;  // a message is built only here, off the common path
    if (!l2::check_submit(kind, !scopes_.empty(), kernels, args, policy_, shape, &bad)) {
      report_fatal(bad.code, bad.message);
      return false;
    }
  }
  if (args.predicate().op != PredicateOp::NONE) {
    if (Status ps = exec::resolve_predicate(args.predicate(), *config_.device, predicate); !ps.ok()) {
      fail_args(l2::submit_op_name(kind), ps.message());
      return false;
    }
  }
  return true;
}

// Step 2: the live tasks this one depends on (explicit ids, the creators of
// its tensors, and the TensorMap's overlapping writers/readers), before
// allocation so the dependency-pool reservation is exact. Only ids are
// looked up; nothing is pinned yet. `retaining` counts those it may retain
// (DEP_RETAIN), the room wire() needs for them.
int TmrRuntime::collect_producers(const CoreTaskArgs& args, bool manual_scope, Producer* producers, int* retaining) {
  int np = 0;
  for (int i = 0; i < args.dependency_count(); ++i) {
    PTO2TaskId id = args.dependency_ids()[i];
    uint8_t flags = args.dependency_flags() ? args.dependency_flags()[i] : (DEP_WAIT | DEP_RETAIN);
    TaskSlot* p = slot_of(id);
    if (p != nullptr) add_producer(producers, &np, p, id, flags);  // retired producers are satisfied
  }
  const int nt = args.tensor_count();
  for (int i = 0; i < nt && !manual_scope; ++i) {
    TensorArgType tag = args.tag(i);
    if (tag == TensorArgType::OUTPUT) continue;
    const ChipTensor& t = *args.tensor(i);
    if (TaskSlot* p = slot_of(t.owner_task_id)) add_producer(producers, &np, p, t.owner_task_id, DEP_WAIT | DEP_RETAIN);
    if (t.manual_dep || tag == TensorArgType::NO_DEP) continue;
    bool writer = tag == TensorArgType::INOUT || tag == TensorArgType::OUTPUT_EXISTING;
    tensor_map_.for_each_dependency(
        t, writer, [&](deps::Owner* o) { add_producer(producers, &np, TaskSlot::of(o), o->id, DEP_WAIT); });
  }
  for (int i = 0; i < np; ++i) {
    if (producers[i].flags & DEP_RETAIN) ++*retaining;
  }
  return np;
}

// Step 3: a slot, heap bytes for the OUTPUTs, dependency nodes and argument
// units from the ring; take_from (tmr_backpressure.cpp) waits when one is
// full or latches its deadlock verdict.
bool TmrRuntime::allocate(TaskRing& ring, uint64_t heap_bytes, uint64_t dep_nodes, const ArgLayout& args,
                          Allocation* out) {
  if (heap_bytes > ring.heap.size) {
    // Upstream reports this as a heap-ring deadlock (2): the request can
    // never fit, so the ring can never make room for it.
    report_fatal(PTO2_ERROR_HEAP_RING_DEADLOCK, "ring " + std::to_string(ring.index) + ": one task needs " +
                                                    std::to_string(heap_bytes) +
                                                    " heap bytes but the heap ring holds " +
                                                    std::to_string(ring.heap.size) + "; raise PTO2_RING_HEAP");
    return false;
  }
  if (dep_nodes > ring.dep_pool.size) {
    report_fatal(PTO2_ERROR_DEP_POOL_OVERFLOW, "ring " + std::to_string(ring.index) + ": one task needs " +
                                                   std::to_string(dep_nodes) +
                                                   " dependency entries but the pool holds " +
                                                   std::to_string(ring.dep_pool.size) + "; raise PTO2_RING_DEP_POOL");
    return false;
  }
  // Every task of an open scope stays live until the scope ends: a scope
  // with a full window of tasks can never make room for another.
  if (ring.pinned_by_open_scopes >= ring.window) {
    // Upstream's distinction: the innermost scope alone filling the window is
    // a scope deadlock (1); nested scopes that share the last ring filling it
    // together is a flow-control deadlock (3).
    const size_t own = scopes_.empty() ? 0 : scope_tasks_.size() - scopes_.back().first_task;
    report_fatal(own >= ring.window ? PTO2_ERROR_SCOPE_DEADLOCK : PTO2_ERROR_FLOW_CONTROL_DEADLOCK,
                 "ring " + std::to_string(ring.index) + ": open scopes hold " +
                     std::to_string(ring.pinned_by_open_scopes) + " live tasks and the task window is " +
                     std::to_string(ring.window) + "; raise PTO2_RING_TASK_WINDOW or split the scope");
    return false;
  }
  for (uint64_t alive = ring.last_alive.load(std::memory_order_acquire); ring.next_seq - alive >= ring.window;
       alive = ring.last_alive.load(std::memory_order_acquire)) {
    if (!wait_for_ring(ring, alive, "task window full", "PTO2_RING_TASK_WINDOW")) return false;
  }
  // A pool a task takes nothing from is skipped: try_alloc(0) always
  // succeeds and moves nothing (most tasks have no OUTPUT, many no producer).
  const uint64_t saved_heap_top = ring.heap.top, saved_pool_top = ring.dep_pool.top;
  *out = Allocation{};
  // try_alloc first, inline: take_from (a call) only when there is no room.
  if (heap_bytes != 0 && !ring.heap.try_alloc(heap_bytes, &out->heap_off) &&
      !take_from(ring, ring.heap, heap_bytes, &out->heap_off, PTO2_ERROR_HEAP_RING_DEADLOCK, "heap", "bytes",
                 "PTO2_RING_HEAP"))
    return false;
  if (dep_nodes != 0 && !ring.dep_pool.try_alloc(dep_nodes, &out->pool_off) &&
      !take_from(ring, ring.dep_pool, dep_nodes, &out->pool_off, PTO2_ERROR_DEP_POOL_OVERFLOW, "dependency pool",
                 "entries", "PTO2_RING_DEP_POOL")) {
    ring.heap.top = saved_heap_top;
    return false;
  }
  // Arguments: the hot pool if they fit there now, else the cold pool, which
  // holds (window + 1) x the largest task, so with the window checked above
  // it always has room; a wait there would be a sizing bug, reported as a
  // flow-control deadlock naming the window.
  ChipTensor* units = nullptr;
  if (const uint64_t need = args.units(); need != 0) {
    uint64_t off = 0;
    if (ring.hot_args.try_alloc(need, &off)) {
      units = ring.hot_arg_units + off;
    } else if (take_from(ring, ring.args, need, &off, PTO2_ERROR_FLOW_CONTROL_DEADLOCK, "argument pool", "units",
                         "PTO2_RING_TASK_WINDOW")) {
      units = ring.arg_units + off;
    } else {
      ring.heap.top = saved_heap_top;
      ring.dep_pool.top = saved_pool_top;
      return false;
    }
  }
  uint64_t seq = ring.next_seq++;
  TaskSlot* t = &ring.slot(seq);
  t->seq = seq;
  t->id = PTO2TaskId::make(static_cast<uint32_t>(ring.index), static_cast<uint32_t>(seq));
  t->ring = static_cast<uint8_t>(ring.index);
  t->heap_end = ring.heap.top;
  t->dep_mark = ring.dep_pool.top;
  t->hot_arg_mark = ring.hot_args.top;
  t->arg_mark = ring.args.top;
  t->completed.store(false, std::memory_order_relaxed);
  t->consumed.store(false, std::memory_order_relaxed);
  t->fanout.store(nullptr, std::memory_order_relaxed);
  t->retained_count = 0;
  t->next_block.store(0, std::memory_order_relaxed);
  t->blocks_done.store(0, std::memory_order_relaxed);
  // Guard + scope reference + own completion.
  t->fanin_pending.store(1, std::memory_order_relaxed);
  t->release_pending.store(2, std::memory_order_relaxed);
  t->tensors = units;
  t->scalars = reinterpret_cast<uint64_t*>(units + args.tensors);
  t->retained = reinterpret_cast<TaskSlot**>(units + args.tensors + args.scalar_units);
  ring.published_seq.store(ring.next_seq, std::memory_order_release);
  out->slot = t;
  return true;
}

// Step 4: the slot's launch fields, and in its argument units its scalars,
// its copies of the input descriptors and fresh heap tensors for its OUTPUTs
// (also handed back in `result`).
void TmrRuntime::materialize(TaskSlot* t, TaskRing& ring, const Allocation& at, const MixedKernels& kernels,
                             const CoreTaskArgs& args, l2::SubmitKind kind, l2::TaskShape shape,
                             const exec::ResolvedPredicate& predicate, const char* op, TaskOutputTensors* result) {
  const bool dummy = kind != l2::SubmitKind::kKernel;
  const int nt = args.tensor_count();
  t->shape = shape;
  t->block_num = dummy ? 1 : args.launch_spec.blocks();
  t->sync_start = !dummy && args.launch_spec.require_sync_start();
  t->predicate = predicate;
  t->kernels[0] = kernels.aic_kernel_id;
  t->kernels[1] = kernels.aiv0_kernel_id;
  t->kernels[2] = kernels.aiv1_kernel_id;
  t->tensor_count = nt;
  t->scalar_count = args.scalar_count();
  // Most tasks pass few scalars (often none): a loop, not a library call.
  for (int i = 0; i < args.scalar_count(); ++i) t->scalars[i] = args.scalars()[i];

  uint64_t out_off = at.heap_off;
  for (int i = 0; i < nt; ++i) {
    if (args.tag(i) != TensorArgType::OUTPUT) {
      t->tensors[i] = *args.tensor(i);
      sanitize::stamp_tag(t->tensors[i], args.tag(i));
      continue;
    }
    const TensorCreateInfo& ci = *args.create_info(i);
    const uint64_t bytes = ci.nbytes();
    ChipTensor& dst = t->tensors[i];
    auto made = l2::make_output_tensor(ci, ring.heap_base + out_off, t->id);
    if (made.ok()) {
      dst = *made;
    } else {
      // check_submit accepted `ci`, so this is a runtime bug; the slot is
      // taken, so the task still goes through (kernels are skipped once fatal).
      report_fatal(PTO2_ERROR_INVALID_ARGS,
                   std::string(op) + ": argument " + std::to_string(i) + " (OUTPUT): " + made.status().message());
      dst = ChipTensor{};
    }
    sanitize::stamp_tag(dst, TensorArgType::OUTPUT);
    if (made.ok() && ci.has_initial_value && bytes > 0) {
      uint8_t* p = static_cast<uint8_t*>(config_.device->device_view_unchecked(dst.buffer.addr));
      size_t es = element_size(ci.dtype);
      for (uint64_t b = 0; b < bytes; b += es) std::memcpy(p + b, &ci.initial_value_bits, es);
    }
    out_off += l2::output_heap_bytes(ci);
    if (result->count < CORE_MAX_TENSOR_ARGS) result->outputs[result->count++] = &dst;
  }
  result->set_task_id(t->id);
}

// Step 5: the TensorMap learns this task's accesses: writers for INOUT /
// OUTPUT_EXISTING, readers for INPUT.
void TmrRuntime::register_accesses(TaskSlot* t, const CoreTaskArgs& args) {
  const int nt = args.tensor_count();
  for (int i = 0; i < nt; ++i) {
    TensorArgType tag = args.tag(i);
    if (tag == TensorArgType::OUTPUT || tag == TensorArgType::NO_DEP || t->tensors[i].manual_dep) continue;
    tensor_map_.insert(t->tensors[i], t, tag != TensorArgType::INPUT);
  }
}

// Step 6: push a node of `nodes` onto each unfinished producer's fanout
// list; pin retained producers so their outputs outlive this task. Returns
// how many of the np fan-in counts it reserved went unused (producers that
// had completed): the caller drops them with its guard, in one atomic.
int TmrRuntime::wire(TaskSlot* t, DepNode* nodes, const Producer* producers, int np) {
  // Reserved before the first node is published: a producer may complete
  // (and count down) as soon as its list holds the node, and the count must
  // not reach zero while wiring goes on. Nobody else sees `t` yet.
  t->fanin_pending.store(1 + np, std::memory_order_relaxed);
  int used_nodes = 0;
  for (int i = 0; i < np; ++i) {
    TaskSlot* p = producers[i].slot;
    // Only this thread reuses slots: an id that still matches is the producer.
    if (p->id != producers[i].id) continue;
    if (producers[i].flags & DEP_WAIT) {
      DepNode* n = &nodes[used_nodes];
      n->consumer = t;
      DepNode* head = p->fanout.load(std::memory_order_acquire);
      if (tasks_here_) {  // alone: nobody completes `p` meanwhile
        if (head != kFanoutClosed) {
          n->next = head;
          p->fanout.store(n, std::memory_order_relaxed);
          ++used_nodes;
        }
        head = kFanoutClosed;
      }
      while (head != kFanoutClosed) {
        n->next = head;
        if (p->fanout.compare_exchange_weak(head, n, std::memory_order_release, std::memory_order_acquire)) {
          ++used_nodes;
          break;
        }
      }
    }
    if (producers[i].flags & DEP_RETAIN) {
      int32_t r = p->release_pending.load(std::memory_order_acquire);
      while (r > 0 && !p->release_pending.compare_exchange_weak(r, r + 1, std::memory_order_acq_rel)) {
      }
      if (r > 0) t->retained[t->retained_count++] = p;
    }
  }
  return np - used_nodes;
}

}  // namespace taskring::tmr
