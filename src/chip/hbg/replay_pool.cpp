#include "replay_pool.hpp"

#include <bit>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

#include "taskring/base/align.hpp"

namespace taskring::hbg {

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

namespace {

// Byte offsets of a state's parts inside its block.
struct StateLayout {
  uint64_t nodes, pending, tensors, boundary, scalars, total;
  explicit StateLayout(const graph::DefinitionHeader& h) {
    nodes = align_up(sizeof(GraphExec), 64);
    pending = nodes + align_up(sizeof(Runnable) * h.node_count, 64);
    tensors = pending + align_up(4ull * h.node_count, 64);
    boundary = tensors + align_up(sizeof(ChipTensor) * h.tensor_arg_count, 64);
    scalars = boundary + align_up(sizeof(ChipTensor) * h.boundary_tensor_count, 64);
    total = scalars + align_up(8ull * h.scalar_arg_count, 64);
  }
};

}  // namespace

// A state's block is freed without running destructors.
static_assert(std::is_trivially_destructible_v<GraphExec> && std::is_trivially_destructible_v<Runnable> &&
              std::is_trivially_destructible_v<ChipTensor>);

void ReplayPool::Block::operator()(uint8_t* p) const { std::free(p); }

ReplayPool::ReplayPool(const graph::DefinitionView& def) : def_(def) {
  const graph::DefinitionHeader& h = def.h();
  const uint32_t n = h.node_count;
  const graph::NodeDef* nd = def.nodes();
  const uint32_t* fio = def.fanin_offsets();
  const uint32_t* foo = def.fanout_offsets();
  initial_pending_.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    initial_pending_[i] = static_cast<int32_t>(fio[i + 1] - fio[i]);
    sinks_ += foo[i + 1] == foo[i] ? 1 : 0;
    if (nd[i].block_num > 1) {
      multi_block_.push_back(i);
      if (nd[i].sync_start == 0) loopable_ = false;
    }
  }
  const uint16_t* ss = def.scalar_src();
  for (uint32_t k = 0; k < h.scalar_arg_count; ++k) {
    if (ss[k] != 0) boundary_scalars_.push_back(k);
  }
  const ChipTensor* tmpl = def.tensor_tmpl();
  const graph::TensorSourceRef* src = def.tensor_src();
  for (uint32_t k = 0; k < h.tensor_arg_count; ++k) {
    const graph::TensorSourceRef& s = src[k];
    const ChipTensor& t = tmpl[k];
    if (s.kind == graph::TensorSource::kInternal) {
      if (static_cast<uint64_t>(s.offset) + t.buffer.size > h.required_heap) static_error_ = "internal tensor outside the heap";
      internal_args_.push_back({k, static_cast<uint64_t>(s.offset)});
    } else if (s.kind == graph::TensorSource::kBoundaryView) {
      const uint64_t es = t.elem_size();
      if (es == 0 || (es & (es - 1)) != 0) static_error_ = "boundary view out of range";
      view_args_.push_back({k, s.index, s.offset, static_cast<uint32_t>(std::countr_zero(es)), t.extent_elem_cache * es});
    } else {
      exact_args_.push_back({k, s.index, t.reserved[0]});
    }
  }
}

GraphExec* ReplayPool::make_state() {
  const graph::DefinitionHeader& h = def_.h();
  const StateLayout at(h);
  auto* block = static_cast<uint8_t*>(std::aligned_alloc(64, at.total));
  if (block == nullptr) return nullptr;
  auto* exec = new (block) GraphExec();
  exec->node_count = h.node_count;
  exec->pool = this;
  exec->nodes = reinterpret_cast<Runnable*>(block + at.nodes);
  exec->pending = reinterpret_cast<int32_t*>(block + at.pending);
  exec->tensors = reinterpret_cast<ChipTensor*>(block + at.tensors);
  exec->scalars = reinterpret_cast<uint64_t*>(block + at.scalars);
  exec->bound_boundary = reinterpret_cast<ChipTensor*>(block + at.boundary);
  // Everything a replay does not rewrite: templates and static scalars.
  const ChipTensor* tmpl = def_.tensor_tmpl();
  for (uint32_t k = 0; k < h.tensor_arg_count; ++k) {
    ChipTensor* c = new (exec->tensors + k) ChipTensor(tmpl[k]);
    c->address_space = AddressSpace::DEVICE;
  }
  std::memcpy(exec->scalars, def_.scalars(), 8ull * h.scalar_arg_count);
  const graph::NodeDef* nd = def_.nodes();
  const uint32_t* foo = def_.fanout_offsets();
  const uint16_t* fanout_idx = def_.fanout_idx();
  for (uint32_t i = 0; i < h.node_count; ++i) {
    Runnable* x = new (exec->nodes + i) Runnable;
    const graph::NodeDef& d = nd[i];
    x->kind = RunKind::kNode;
    x->shape = d.shape;
    x->block_num = d.block_num;
    x->sync_start = d.sync_start != 0;
    std::memcpy(x->kernels, d.kernels, sizeof(x->kernels));
    x->tensor_count = static_cast<int32_t>(d.tensor_count);
    x->scalar_count = static_cast<int32_t>(d.scalar_count);
    x->tensors = exec->tensors + d.tensor_first;
    x->scalars = exec->scalars + d.scalar_first;
    x->fanout16 = fanout_idx + foo[i];
    x->fanout_count = static_cast<int32_t>(foo[i + 1] - foo[i]);
    x->index = i;
    x->exec = exec;
  }
  states_.emplace_back(block);
  return exec;
}

GraphExec* ReplayPool::acquire() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!free_.empty()) {
    GraphExec* e = free_.back();
    free_.pop_back();
    return e;
  }
  return make_state();
}

void ReplayPool::release(GraphExec* exec) {
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(exec);
}

void ReplayPool::reset_between_runs() {
  std::lock_guard<std::mutex> lock(mu_);
  free_.clear();
  for (auto& s : states_) free_.push_back(reinterpret_cast<GraphExec*>(s.get()));
}

const char* ReplayPool::bind_tensors(GraphExec* exec, const ChipTensor* btensors, uint64_t heap_base) const {
  if (static_error_ != nullptr) return static_error_;
  ChipTensor* tens = exec->tensors;
  // Each replay has a heap of its own: internal arguments move with it.
  if (!exec->bound || exec->bound_heap_base != heap_base) {
    for (const InternalArg& a : internal_args_) tens[a.arg].buffer.addr = heap_base + a.offset;
    exec->bound_heap_base = heap_base;
  }
  // The same boundary (byte for byte) as this state's last replay: the
  // boundary's arguments are bound and were checked.
  const uint32_t nb = def_.h().boundary_tensor_count;
  if (exec->bound && std::memcmp(exec->bound_boundary, btensors, sizeof(ChipTensor) * nb) == 0) return nullptr;
  exec->bound = false;  // until every argument below is bound
  for (const ViewArg& a : view_args_) {
    // The template's shape, strides and tag are in place; the boundary
    // decides the buffer, its owner and where the view starts.
    const ChipTensor& b = btensors[a.boundary];
    const int64_t start = static_cast<int64_t>(b.start_offset * b.elem_size()) + a.offset;
    if (start < 0) return "boundary view out of range";
    const uint64_t ustart = static_cast<uint64_t>(start);
    if ((ustart & ((uint64_t{1} << a.shift) - 1)) != 0 || ustart + a.extent_bytes > b.buffer.size) {
      return "boundary view out of range";
    }
    ChipTensor& c = tens[a.arg];
    c.buffer = b.buffer;
    c.owner_task_id = b.owner_task_id;
    c.start_offset = ustart >> a.shift;
  }
  for (const ExactArg& a : exact_args_) {
    ChipTensor& c = tens[a.arg];
    c = btensors[a.boundary];
    c.reserved[0] = a.tag;
    c.address_space = AddressSpace::DEVICE;
  }
  std::memcpy(static_cast<void*>(exec->bound_boundary), btensors, sizeof(ChipTensor) * nb);
  exec->bound = true;
  return nullptr;
}

const char* ReplayPool::begin_replay(GraphExec* exec, Runnable* outer, const ChipTensor* btensors,
                                     const uint64_t* bscalars, uint64_t heap_base) const {
  if (const char* bad = bind_tensors(exec, btensors, heap_base)) return bad;
  const uint16_t* scalar_src = def_.scalar_src();
  for (uint32_t k : boundary_scalars_) exec->scalars[k] = bscalars[scalar_src[k] - 1];
  std::memcpy(exec->pending, initial_pending_.data(), 4ull * initial_pending_.size());
  for (uint32_t i : multi_block_) {
    exec->nodes[i].next_block.store(0, std::memory_order_relaxed);
    exec->nodes[i].blocks_done.store(0, std::memory_order_relaxed);
  }
  exec->outer = outer;
  exec->sequential = false;
  exec->remaining.store(sinks_, std::memory_order_relaxed);
  return nullptr;
}

bool ReplayPool::next_loop(bool* timed) {
  std::lock_guard<std::mutex> lock(mode_mu_);
  *timed = mode_.needs_time(0);
  return mode_.next_inline(0);
}

void ReplayPool::record_replay(bool loop, uint64_t ns, bool timed, bool waited) {
  std::lock_guard<std::mutex> lock(mode_mu_);
  mode_.record(0, loop, ns, timed ? 1 : 0, true, waited);
}

}  // namespace taskring::hbg
