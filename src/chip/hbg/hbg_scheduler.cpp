// hbg device half: the control processor boots from the uploaded task image
// and only schedules; executors run kernels inline; GRAPH tasks expand their
// Definition into the replay's execution storage.
#include <sched.h>

#include <bit>
#include <cstring>
#include <new>

#include "graph/definition.hpp"
#include "graph/submission.hpp"
#include "hbg_runtime.hpp"
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

// A Definition's checks, run once per run per Definition (the run's kernel
// table is fixed, so its kernel ids are checked once, not per node per
// replay): its layout, its content hash, and every kernel id registered.
Status verify_definition(const graph::DefinitionView& def, uint64_t definition_bytes,
                         const taskring_kernel_fn* kernels) {
  TASKRING_RETURN_IF_ERROR(graph::validate_definition(def, definition_bytes));
  std::vector<uint8_t> copy(def.base, def.base + def.h().total_bytes);
  reinterpret_cast<graph::DefinitionHeader*>(copy.data())->content_hash = 0;
  if (graph::hash_image(copy.data(), copy.size()) != def.h().content_hash) {
    return invalid_argument("Definition hash mismatch");
  }
  const graph::NodeDef* vd = def.nodes();
  for (uint32_t i = 0; i < def.h().node_count; ++i) {
    for (int slot = 0; slot < 3; ++slot) {
      int32_t fid = vd[i].kernels[slot];
      if (fid != INVALID_KERNEL_ID && (fid < 0 || fid >= TASKRING_MAX_FUNC_ID || kernels[fid] == nullptr)) {
        return invalid_argument("node " + std::to_string(i) + " uses unregistered kernel " + std::to_string(fid));
      }
    }
  }
  return Status::Ok();
}

// Builds a replay's tensor arguments in `tens` from the Definition's templates
// and the submission's boundary tensors; the internal ones are placed in the
// replay heap at `heap_base`. Returns what is out of range, or nullptr.
// Hot: runs per argument per replay.
const char* bind_tensor_args(const graph::DefinitionView& def, const ChipTensor* btensors, uint64_t heap_base,
                             ChipTensor* tens) {
  const ChipTensor* tmpl = def.tensor_tmpl();
  const graph::TensorSourceRef* src = def.tensor_src();
  // Counts in locals: the stores below go to device memory the compiler must
  // assume may alias the Definition image.
  const uint32_t tensor_args = def.h().tensor_arg_count;
  const uint64_t required_heap = def.h().required_heap;
  for (uint32_t k = 0; k < tensor_args; ++k) {
    // Built in place: one 128-byte copy per argument, not two.
    ChipTensor& c = tens[k];
    const graph::TensorSourceRef& s = src[k];
    if (s.kind == graph::TensorSource::kBoundaryExact) {
      c = btensors[s.index];
      c.reserved[0] = tmpl[k].reserved[0];  // the node's tag (sanitize/arg_tag.hpp)
    } else if (s.kind == graph::TensorSource::kBoundaryView) {
      c = tmpl[k];
      const ChipTensor& b = btensors[s.index];
      const uint64_t es = c.elem_size();
      const int64_t start = static_cast<int64_t>(b.start_offset * b.elem_size()) + s.offset;
      if (start < 0 || es == 0) return "boundary view out of range";
      const uint64_t ustart = static_cast<uint64_t>(start);
      // Element sizes are powers of two: a mask and a shift, not a 64-bit
      // division (tens of cycles) per argument per replay.
      const bool pow2 = (es & (es - 1)) == 0;
      if ((pow2 ? (ustart & (es - 1)) : (ustart % es)) != 0) return "boundary view out of range";
      c.buffer = b.buffer;
      c.owner_task_id = b.owner_task_id;
      c.start_offset = pow2 ? ustart >> std::countr_zero(es) : ustart / es;
      if (ustart + c.extent_elem_cache * es > c.buffer.size) return "boundary view out of range";
    } else {
      c = tmpl[k];
      if (static_cast<uint64_t>(s.offset) + c.buffer.size > required_heap) return "internal tensor outside the heap";
      c.buffer.addr = heap_base + static_cast<uint64_t>(s.offset);
    }
    c.address_space = AddressSpace::DEVICE;
  }
  return nullptr;
}

// Builds the replay's node Runnables in `nodes` from the Definition's node
// table and fanin/fanout offsets; returns the number of sinks.
int32_t init_graph_nodes(const graph::DefinitionView& def, GraphExec* exec, Runnable* nodes, ChipTensor* tens,
                         uint64_t* scal) {
  const uint32_t n = def.h().node_count;
  const graph::NodeDef* nd = def.nodes();
  const uint32_t* fio = def.fanin_offsets();
  const uint32_t* foo = def.fanout_offsets();
  const uint16_t* fanout_idx = def.fanout_idx();
  int32_t sinks = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Runnable* x = new (nodes + i) Runnable;  // default-init: members set below, no zero fill first
    const graph::NodeDef d = nd[i];
    x->fanin_pending.store(static_cast<int32_t>(fio[i + 1] - fio[i]), std::memory_order_relaxed);
    x->kind = RunKind::kNode;
    x->shape = d.shape;
    x->block_num = d.block_num;
    x->sync_start = d.sync_start != 0;
    std::memcpy(x->kernels, d.kernels, sizeof(x->kernels));
    x->tensor_count = static_cast<int32_t>(d.tensor_count);
    x->scalar_count = static_cast<int32_t>(d.scalar_count);
    x->tensors = tens + d.tensor_first;
    x->scalars = scal + d.scalar_first;
    x->fanout16 = fanout_idx + foo[i];
    x->fanout_count = static_cast<int32_t>(foo[i + 1] - foo[i]);
    x->index = i;
    x->exec = exec;
    sinks += x->fanout_count == 0 ? 1 : 0;
  }
  return sinks;
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

engine::Started<HbgRuntime::Readied> HbgRuntime::start(Runnable* r) {
  if (r->kind == RunKind::kGraph) return expand_graph(r);
  return {};
}

engine::Started<HbgRuntime::Readied> HbgRuntime::expand_graph(Runnable* r) {
  using Started = engine::Started<Readied>;
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
  {
    std::lock_guard<std::mutex> lock(verify_mu_);
    if (verified_defs_.count(sub->definition_addr) == 0) {
      Status v = verify_definition(def, sub->definition_bytes, request_.kernels);
      if (!v.ok()) return fail(v.message());
      verified_defs_.insert(sub->definition_addr);
    }
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
  auto stv = config_.device->device_view(sub->heap_base + heap_used, h.storage_bytes);
  if (!stv.ok()) return fail("execution storage: " + stv.status().message());
  auto* storage = static_cast<uint8_t*>(*stv);
  const uint32_t n = h.node_count;
  auto* exec = new (storage) GraphExec();
  auto* nodes = reinterpret_cast<Runnable*>(storage + align_up(sizeof(GraphExec), 64));
  auto* tens =
      reinterpret_cast<ChipTensor*>(storage + align_up(sizeof(GraphExec), 64) + align_up(sizeof(Runnable) * n, 64));
  auto* scal = reinterpret_cast<uint64_t*>(reinterpret_cast<uint8_t*>(tens) +
                                           align_up(sizeof(ChipTensor) * h.tensor_arg_count, 64));
  if (const char* bad = bind_tensor_args(def, btensors, sub->heap_base, tens)) return fail(bad);
  const uint16_t* scalar_src = def.scalar_src();
  const uint64_t* scalar_val = def.scalars();
  for (uint32_t k = 0, scalar_args = h.scalar_arg_count; k < scalar_args; ++k) {
    uint16_t s = scalar_src[k];
    scal[k] = s == 0 ? scalar_val[k] : bscalars[s - 1];
  }
  const int32_t sinks = init_graph_nodes(def, exec, nodes, tens, scal);
  exec->node_count = n;
  exec->outer = r;
  exec->nodes = nodes;
  exec->remaining.store(sinks, std::memory_order_release);
  if (n == 0) return Started{Started::kCompleteNow, {}};
  // The roots are ready as they are: handed off without a fanin count.
  return Started{Started::kExpanded, Readied{nodes, def.roots(), nullptr, 0, static_cast<int32_t>(h.root_count), false}};
}

HbgRuntime::Completion HbgRuntime::complete(Runnable* r) {
  if (r->kind == RunKind::kNode) {
    // Only sinks count down `remaining`: every node is an ancestor of a sink,
    // and a sink runs after all its ancestors released it, so the last sink
    // ends the replay. The other nodes touch no shared counter (one contended
    // cache line per node before). Once a node has released its last
    // consumer the replay may end and its storage be reused: the cursor holds
    // everything next_ready needs, and nothing of the node is touched after.
    GraphExec* exec = r->exec;
    if (r->fanout_count != 0) return Completion{Readied{exec->nodes, r->fanout16, nullptr, 0, r->fanout_count, true}, false};
    if (exec->remaining.fetch_sub(1, std::memory_order_acq_rel) != 1) return Completion{{}, false};
    nodes_run_.fetch_add(exec->node_count, std::memory_order_relaxed);
    return complete(exec->outer);  // the GRAPH task completes with its last sink
  }
  return Completion{Readied{table_.get(), nullptr, r->fanout32, 0, r->fanout_count, true}, true};
}

Runnable* HbgRuntime::next_ready(Readied& x) {
  while (x.next < x.count) {
    const int32_t k = x.next++;
    Runnable* c = &x.base[x.index16 != nullptr ? x.index16[k] : x.index32[k]];
    if (!x.counts_fanin || c->fanin_pending.fetch_sub(1, std::memory_order_acq_rel) == 1) return c;
  }
  return nullptr;
}

}  // namespace taskring::hbg
