// hbg device half: the control processor boots from the uploaded task image
// and only schedules; executors run kernels inline; a GRAPH task takes a
// state of its Definition's ReplayPool and starts its nodes (replay_pool.hpp).
#include <sched.h>

#include <cstring>

#include "exec/kernel_wait.hpp"
#include "graph/definition.hpp"
#include "graph/submission.hpp"
#include "hbg_runtime.hpp"
#include "replay_pool.hpp"
#include "taskring/base/align.hpp"
#include "taskring/base/clock.hpp"

namespace taskring::hbg {

namespace {

std::string runnable_name(const Runnable& r) {
  if (r.kind == RunKind::kNode) {
    return "node " + std::to_string(r.index) + " of GRAPH task 0:" + std::to_string(r.exec->outer->index);
  }
  return std::string(r.kind == RunKind::kGraph ? "GRAPH task 0:" : "task 0:") + std::to_string(r.index);
}

}  // namespace

void HbgRuntime::boot() {
  auto view = config_.device->device_view(image_device_, image_.size());
  const auto* h = view.ok() ? static_cast<const ImageHeader*>(*view) : nullptr;
  if (h == nullptr || h->magic != kImageMagic || h->task_count != total_tasks_) {
    report_fatal(PTO2_ERROR_INVALID_ARGS, "hbg boot: the uploaded task image is not valid");
    publish_finished();
    return;
  }
  const uint64_t n = h->task_count;
  if (table_capacity_ < n) {
    table_.reset(new Runnable[n]);
    table_capacity_ = n;
  }
  uint64_t nodes = 0;
  for (auto& p : submissions_) nodes += graph::DefinitionView{p->def->image.data()}.h().node_count;
  uint64_t want = 2 * (n + nodes) + 64;
  if (want > queue_capacity_) {
    size_queues(want);
    queue_capacity_ = want;
  }
  const ImageTask* tasks = h->tasks.get();
  for (uint64_t i = 0; i < n; ++i) {
    const ImageTask& it = tasks[i];
    Runnable& r = table_[i];
    r.fanin_pending.store(it.fanin_count, std::memory_order_relaxed);
    r.next_block.store(0, std::memory_order_relaxed);
    r.blocks_done.store(0, std::memory_order_relaxed);
    r.kind = it.kind == TaskKind::kGraph ? RunKind::kGraph : RunKind::kTask;
    r.shape = it.shape;
    r.block_num = it.block_num;
    r.predicate = it.predicate;
    r.sync_start = it.sync_start;
    std::memcpy(r.kernels, it.kernels, sizeof(r.kernels));
    r.tensor_count = it.tensor_count;
    r.scalar_count = it.scalar_count;
    r.tensors = it.tensors.get();
    r.scalars = it.scalars.get();
    r.fanout32 = it.fanout.get();
    r.fanout16 = nullptr;
    r.fanout_count = it.fanout_count;
    r.index = static_cast<uint32_t>(i);
    r.exec = nullptr;
    r.submission_addr = it.submission_addr;
  }
  // Roots are queued before the gate opens: an executor that enters the run
  // sees the whole table and the queues through the gate's seq_cst store.
  const uint32_t* roots = h->roots.get();
  for (uint32_t k = 0; k < h->root_count; ++k) push_ready(&table_[roots[k]]);
  gate_.open();
}

std::string HbgRuntime::task_name(const Runnable* r) const { return runnable_name(*r); }

l2::Started<HbgRuntime::Readied> HbgRuntime::start(Runnable* r, int executor,
                                                       l2::LocalReady<Runnable>* local) {
  if (r->kind == RunKind::kGraph) return expand_graph(r, executor, local);
  return {};
}

l2::Started<HbgRuntime::Readied> HbgRuntime::expand_graph(Runnable* r, int executor,
                                                              l2::LocalReady<Runnable>* local) {
  using Started = l2::Started<Readied>;
  auto fail = [&](const std::string& why) {
    report_fatal(PTO2_ERROR_INVALID_ARGS, runnable_name(*r) + ": " + why);
    return Started{Started::kCompleteNow, {}};
  };
  if (is_fatal()) return Started{Started::kCompleteNow, {}};
  auto sv = config_.device->device_view(r->submission_addr, sizeof(graph::GraphSubmission));
  if (!sv.ok()) return fail("submission image: " + sv.status().message());
  const auto* sub = static_cast<const graph::GraphSubmission*>(*sv);
  if (sub->magic != graph::kSubmissionMagic) return fail("submission image has a bad magic");
  if (!config_.device->device_view(r->submission_addr, sub->total_bytes).ok() ||
      sub->scalars_off + 8ull * sub->scalar_count > sub->total_bytes) {
    return fail("submission image lies outside its allocation");
  }
  auto dv = config_.device->device_view(sub->definition_addr, sub->definition_bytes);
  if (!dv.ok()) return fail("Definition: " + dv.status().message());
  const graph::DefinitionView def{static_cast<const uint8_t*>(*dv)};
  ReplayPool* pool = nullptr;
  {
    std::lock_guard<std::mutex> lock(verify_mu_);
    if (verified_defs_.count(sub->definition_addr) == 0) {
      Status v = verify_definition(def, sub->definition_bytes, request_.kernels);
      if (!v.ok()) return fail(v.message());
      verified_defs_.insert(sub->definition_addr);
    }
    // Definitions keep their device copy while the runtime lives, so a pool
    // made for this address stays valid; a different image there gets a new
    // pool.
    std::unique_ptr<ReplayPool>& slot = replay_pools_[sub->definition_addr];
    if (slot == nullptr || slot->definition().base != def.base ||
        slot->definition().h().content_hash != def.h().content_hash) {
      slot = std::make_unique<ReplayPool>(def);
    }
    pool = slot.get();
  }
  const graph::DefinitionHeader& h = def.h();
  if (sub->full_key != h.full_key || sub->definition_hash != h.content_hash ||
      sub->tensor_count != h.boundary_tensor_count || sub->scalar_count != h.boundary_scalar_count) {
    return fail("submission does not belong to its Definition");
  }
  const uint64_t heap_used = align_up(h.required_heap, 1024);
  if (heap_used + h.storage_bytes > sub->heap_bytes) return fail("replay heap smaller than the Definition needs");
  const auto* btensors = reinterpret_cast<const ChipTensor*>(reinterpret_cast<const uint8_t*>(sub) + sub->tensors_off);
  const auto* bscalars = reinterpret_cast<const uint64_t*>(reinterpret_cast<const uint8_t*>(sub) + sub->scalars_off);
  const uint32_t n = h.node_count;
  if (n == 0) return Started{Started::kCompleteNow, {}};
  GraphExec* exec = pool->acquire();
  if (exec == nullptr) return fail("out of host memory for a replay state");
  if (const char* bad = pool->begin_replay(exec, r, btensors, bscalars, sub->heap_base)) {
    pool->release(exec);
    return fail(bad);
  }
  bool timed = false;
  const bool picked = executors_ > 1 && pool->loopable();
  if (executors_ == 1 ? pool->loopable() : picked && pool->next_loop(&timed)) {
    const uint64_t t0 = timed ? mono_ns() : 0;
    const uint64_t waits = exec::kernel_waits();
    run_replay_loop(exec, executor, local);
    if (picked) pool->record_replay(true, timed ? mono_ns() - t0 : 0, timed, exec::kernel_waits() != waits);
    (void)finish_replay(exec);  // returns r: completed by the base (kCompleteNow)
    return Started{Started::kCompleteNow, {}};
  }
  exec->probe_start_ns = 0;
  if (picked) {
    exec->probe_start_ns = timed ? mono_ns() | 1 : 0;  // | 1: never 0 when timed
    exec->waits_at_start = exec::kernel_waits();
  }
  exec->picked = picked;
  // The roots are ready as they are: handed off without a fanin count.
  return Started{Started::kExpanded,
                 Readied{exec->nodes, def.roots(), nullptr, nullptr, 0, static_cast<int32_t>(h.root_count), false}};
}

void HbgRuntime::run_replay_loop(GraphExec* exec, int executor, l2::LocalReady<Runnable>* local) {
  // One executor: node order is a topological order, so the replay is a
  // loop; no counter, no queue, no hand-off. A node of one block on one
  // core (the common case) is launched with the place made once here; the
  // others (MIX, dummy, require_sync_start, sanitized runs) go through
  // execute_task, as queued tasks do (their completions hand nothing off:
  // complete() of a node of a sequential replay returns an empty cursor).
  exec->sequential = true;
  Runnable* nodes = exec->nodes;
  const exec::LaunchPlace& place = places_[executor];
  const bool plain = config_.sanitizer == nullptr;
  std::string failure;
  for (uint32_t i = 0, n = exec->node_count; i < n; ++i) {
    Runnable* x = &nodes[i];
    auto name = [x] { return runnable_name(*x); };
    const auto shape = static_cast<l2::TaskShape>(x->shape);
    if (!plain || x->block_num != 1 || shape == l2::TaskShape::kMix || shape == l2::TaskShape::kDummy) {
      execute_task(x, executor, local);
      continue;
    }
    if (is_fatal()) continue;
    const exec::LaunchTask task{x->tensors, x->tensor_count, x->scalars, x->scalar_count, x->kernels, 1, x->index};
    if (!l2::run_block(task, 0, place, *config_.device, request_.kernels, counters_.kernel_calls_of(local->lane), name,
                       &failure)) {
      report_fatal(PTO2_ERROR_KERNEL_FAILED, failure);
    }
  }
}

Runnable* HbgRuntime::finish_replay(GraphExec* exec) {
  Runnable* outer = exec->outer;
  const uint32_t n = exec->node_count;
  exec->pool->release(exec);  // touch nothing of it after: another replay may take it
  nodes_run_.fetch_add(n, std::memory_order_relaxed);
  return outer;
}

HbgRuntime::Completion HbgRuntime::complete(Runnable* r) {
  if (r->kind == RunKind::kNode) {
    // Only sinks count down `remaining`: every node is an ancestor of a sink,
    // and a sink runs after all its ancestors released it, so the last sink
    // ends the replay. The other nodes touch no shared counter (one contended
    // cache line per node before). Once a node has released its last
    // consumer the replay may end and its state be taken by another replay:
    // the cursor holds everything next_ready needs, and nothing of the node
    // is touched after.
    GraphExec* exec = r->exec;
    if (exec->sequential) return Completion{{}, false};  // run_replay_loop ends the replay
    if (r->fanout_count != 0) {
      return Completion{Readied{exec->nodes, r->fanout16, nullptr, exec->pending, 0, r->fanout_count, true}, false};
    }
    if (exec->remaining.fetch_sub(1, std::memory_order_acq_rel) != 1) return Completion{{}, false};
    if (exec->picked) {
      // Read before finish_replay gives the state back.
      const uint64_t t0 = exec->probe_start_ns;
      exec->pool->record_replay(false, t0 != 0 ? mono_ns() - t0 : 0, t0 != 0,
                                   exec::kernel_waits() != exec->waits_at_start);
    }
    return complete(finish_replay(exec));  // the GRAPH task completes with its last sink
  }
  return Completion{Readied{table_.get(), nullptr, r->fanout32, nullptr, 0, r->fanout_count, true}, true};
}

Runnable* HbgRuntime::next_ready(Readied& x) {
  while (x.next < x.count) {
    const int32_t k = x.next++;
    const uint32_t i = x.index16 != nullptr ? x.index16[k] : x.index32[k];
    Runnable* c = &x.base[i];
    if (!x.counts_fanin) return c;
    const int32_t left = x.pending != nullptr
                             ? std::atomic_ref<int32_t>(x.pending[i]).fetch_sub(1, std::memory_order_acq_rel)
                             : c->fanin_pending.fetch_sub(1, std::memory_order_acq_rel);
    if (left == 1) return c;
  }
  return nullptr;
}

}  // namespace taskring::hbg
