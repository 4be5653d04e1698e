#include "recording.hpp"

#include <algorithm>
#include <cstring>

#include "l2/submit_checks.hpp"
#include "sanitize/arg_tag.hpp"

namespace taskring::graph {

namespace {

bool same_view(const ChipTensor& a, const ChipTensor& b) {
  if (a.buffer.addr != b.buffer.addr || a.buffer.size != b.buffer.size || a.start_offset != b.start_offset ||
      a.ndims != b.ndims || a.dtype != b.dtype || a.manual_dep != b.manual_dep) {
    return false;
  }
  for (uint32_t d = 0; d < a.ndims; ++d) {
    if (a.shapes[d] != b.shapes[d] || a.strides[d] != b.strides[d]) return false;
  }
  return true;
}

bool writes(TensorArgType tag) { return tag == TensorArgType::INOUT || tag == TensorArgType::OUTPUT_EXISTING; }

}  // namespace

Recording::Recording() = default;

Recording::Recording(std::string body_name, uint64_t full_key, const GraphTaskArgs& boundary) {
  begin(std::move(body_name), full_key, boundary);
}

void Recording::begin(std::string body_name, uint64_t full_key, const GraphTaskArgs& boundary) {
  body_ = std::move(body_name);
  full_key_ = full_key;
  outside_dependency_ = false;
  btensors_.clear();
  bargs_.clear();
  g_.clear();
  outputs_ = 0;
  map_.reset();
  vtop_ = 0;
  scopes_.clear();
  error_.clear();
  const int nt = boundary.tensor_count();
  btensors_.reserve(static_cast<size_t>(nt));
  for (int i = 0; i < nt; ++i) btensors_.push_back(*boundary.tensor(i));
  for (int i = 0; i < nt; ++i) {
    const ChipTensor& t = btensors_[static_cast<size_t>(i)];
    switch (boundary.tag(i)) {
      case TensorArgType::INPUT: bargs_.add_input(t); break;
      case TensorArgType::INOUT: bargs_.add_inout(t); break;
      case TensorArgType::OUTPUT_EXISTING: bargs_.add_output(t); break;
      default: bargs_.add_no_dep(t); break;
    }
  }
  bargs_.add_scalars(boundary.scalars(), boundary.scalar_count());
  make_signature(bargs_, &signature_, &scalar_partition_);
}

void Recording::add_producer(RecordedNode& n, uint32_t p) {
  const uint16_t* f = g_.fanin.data() + n.fanin_first;
  for (uint32_t k = 0; k < n.fanin_count; ++k) {
    if (f[k] == p) return;
  }
  g_.fanin.push_back(static_cast<uint16_t>(p));
  ++n.fanin_count;
}

ChipTensor* Recording::new_output(const ChipTensor& t) {
  const size_t chunk = outputs_ / kOutputChunk;
  if (chunk == output_chunks_.size()) output_chunks_.push_back(std::make_unique<ChipTensor[]>(kOutputChunk));
  ChipTensor* slot = &output_chunks_[chunk][outputs_ % kOutputChunk];
  *slot = t;
  ++outputs_;
  return slot;
}

void Recording::fail(const std::string& construct) {
  if (error_.empty()) error_ = "Graph body '" + body_ + "': " + construct;
}

void Recording::scope_begin(PTO2ScopeMode mode) {
  bool in_manual = !scopes_.empty() && scopes_.back();
  if (scopes_.size() + 1 >= static_cast<size_t>(PTO2_MAX_SCOPE_DEPTH)) {
    fail("more than " + std::to_string(PTO2_MAX_SCOPE_DEPTH) + " nested scopes");
  }
  if (mode == PTO2ScopeMode::AUTO && in_manual) fail("an AUTO scope inside a MANUAL scope");
  scopes_.push_back(in_manual || mode == PTO2ScopeMode::MANUAL);
}

void Recording::scope_end() {
  if (scopes_.empty()) {
    fail("rt_scope_end without a scope opened in the body");
    return;
  }
  scopes_.pop_back();
}

void Recording::note_view_range(int boundary, const ChipTensor& view) {
  const ChipTensor& b = btensors_[static_cast<size_t>(boundary)];
  int64_t lo =
      static_cast<int64_t>(view.start_offset * view.elem_size()) - static_cast<int64_t>(b.start_offset * b.elem_size());
  int64_t hi = lo + static_cast<int64_t>(view.extent_bytes());
  BoundarySignature& s = signature_[static_cast<size_t>(boundary)];
  s.view_lo = std::min(s.view_lo, lo);
  s.view_hi = std::max(s.view_hi, hi);
}

bool Recording::classify(const ChipTensor& t, int node, int arg, TensorSourceRef* src) {
  const int nb = static_cast<int>(btensors_.size());
  for (int j = 0; j < nb; ++j) {
    if (same_view(t, btensors_[static_cast<size_t>(j)])) {
      *src = TensorSourceRef{TensorSource::kBoundaryExact, 0, static_cast<uint16_t>(j), 0, 0};
      note_view_range(j, t);
      return true;
    }
  }
  for (int j = 0; j < nb; ++j) {
    const ChipTensor& b = btensors_[static_cast<size_t>(j)];
    if (b.buffer.addr == t.buffer.addr && b.buffer.size == t.buffer.size) {
      int64_t off =
          static_cast<int64_t>(t.start_offset * t.elem_size()) - static_cast<int64_t>(b.start_offset * b.elem_size());
      *src = TensorSourceRef{TensorSource::kBoundaryView, 0, static_cast<uint16_t>(j), 0, off};
      note_view_range(j, t);
      return true;
    }
  }
  uint64_t a = t.buffer.addr;
  if (a >= kRecordVirtualBase && a < kRecordVirtualBase + vtop_) {
    uint64_t off = a - kRecordVirtualBase;
    // Nodes own consecutive windows in node order: the producer is the last
    // node whose window starts at or before `off`.
    const std::vector<RecordedNode>& nodes = g_.nodes;
    auto it = std::upper_bound(nodes.begin(), nodes.end(), off,
                               [](uint64_t v, const RecordedNode& n) { return v < n.heap_offset; });
    while (it != nodes.begin()) {
      --it;
      if (it->output_bytes == 0) continue;
      if (off + t.buffer.size <= it->heap_offset + it->output_bytes) {
        *src = TensorSourceRef{TensorSource::kInternal, 0, static_cast<uint16_t>(it - nodes.begin()), 0,
                               static_cast<int64_t>(off)};
        return true;
      }
      break;
    }
  }
  fail("argument " + std::to_string(arg) + " of node " + std::to_string(node) +
       ": tensor source cannot be classified (" + t.describe() +
       " is not a boundary tensor, a view of a boundary tensor's buffer, or a tensor produced inside the body; "
       "pass it through the GraphTaskArgs boundary)");
  return false;
}

TaskOutputTensors Recording::record(const char* op, const MixedKernels& kernels, uint8_t shape, bool dummy,
                                    const CoreTaskArgs& args) {
  TaskOutputTensors result;
  if (failed()) return result;
  const int idx = static_cast<int>(g_.nodes.size());
  if (idx >= GRAPH_MAX_NODES) {
    fail(std::string(op) + ": more than " + std::to_string(GRAPH_MAX_NODES) +
         " nodes in one Definition (GRAPH_MAX_NODES); split the body");
    return result;
  }
  // Arguments and producers go straight to the flat arrays; the node's
  // ranges start where the previous node's ended.
  RecordedNode n;
  n.tensor_first = static_cast<uint32_t>(g_.tmpl.size());
  n.scalar_first = static_cast<uint32_t>(g_.scalars.size());
  n.fanin_first = static_cast<uint32_t>(g_.fanin.size());
  n.kernels[0] = kernels.aic_kernel_id;
  n.kernels[1] = kernels.aiv0_kernel_id;
  n.kernels[2] = kernels.aiv1_kernel_id;
  n.shape = shape;
  n.block_num = dummy ? 1 : args.launch_spec.blocks();
  n.sync_start = !dummy && args.launch_spec.require_sync_start();
  const bool manual = !scopes_.empty() && scopes_.back();
  for (int i = 0; i < args.dependency_count(); ++i) {
    PTO2TaskId id = args.dependency_ids()[i];
    if (!id.is_valid()) continue;
    if (id.ring() == kRecordRing && id.local() < static_cast<uint32_t>(idx)) {
      add_producer(n, id.local());
      continue;
    }
    // A task outside the body (upstream allows it: the node waits for it).
    outside_dependency_ = true;
    fail(std::string(op) + " (node " + std::to_string(idx) + ") depends explicitly on task " +
         std::to_string(id.ring()) + ":" + std::to_string(id.local()) + ", outside the body");
    return result;
  }
  n.heap_offset = vtop_;
  const int nt = args.tensor_count();
  for (int i = 0; i < nt; ++i) {
    TensorArgType tag = args.tag(i);
    if (tag == TensorArgType::OUTPUT) {
      const TensorCreateInfo& ci = *args.create_info(i);
      if (ci.has_initial_value) {
        fail(std::string(op) + " (node " + std::to_string(idx) + "): OUTPUT argument " + std::to_string(i) +
             " has an initial value, which hbg cannot provide (the device heap is not host-writable)");
        return result;
      }
      uint64_t off = vtop_;
      auto made = l2::make_output_tensor(ci, kRecordVirtualBase + off,
                                             PTO2TaskId::make(kRecordRing, static_cast<uint32_t>(idx)));
      if (!made.ok()) {
        fail(std::string(op) + " (node " + std::to_string(idx) + "): OUTPUT argument " + std::to_string(i) + ": " +
             made.status().message());
        return result;
      }
      ChipTensor t = *made;
      sanitize::stamp_tag(t, TensorArgType::OUTPUT);
      vtop_ += l2::output_heap_bytes(ci);
      ChipTensor* out = new_output(t);
      g_.tmpl.push_back(t);
      g_.src.push_back(
          TensorSourceRef{TensorSource::kInternal, 0, static_cast<uint16_t>(idx), 0, static_cast<int64_t>(off)});
      if (result.count < CORE_MAX_TENSOR_ARGS) result.outputs[result.count++] = out;
      continue;
    }
    const ChipTensor& t = *args.tensor(i);
    TensorSourceRef src;
    if (!classify(t, idx, i, &src)) return result;
    if (src.kind != TensorSource::kInternal && writes(tag)) {
      TensorArgType btag = bargs_.tag(src.index);
      if (btag == TensorArgType::INPUT || btag == TensorArgType::NO_DEP) {
        fail(std::string(op) + " (node " + std::to_string(idx) + "): argument " + std::to_string(i) + " writes (" +
             std::string(tensor_arg_type_name(tag)) + ") boundary tensor " + std::to_string(src.index) +
             ", which the call site passed as " + std::string(tensor_arg_type_name(btag)) +
             "; pass it with add_inout or add_output");
        return result;
      }
    }
    g_.tmpl.push_back(t);
    sanitize::stamp_tag(g_.tmpl.back(), tag);
    g_.src.push_back(src);
    if (manual) continue;
    if (t.owner_task_id.is_valid() && t.owner_task_id.ring() == kRecordRing &&
        t.owner_task_id.local() < static_cast<uint32_t>(idx)) {
      add_producer(n, t.owner_task_id.local());
    }
    if (t.manual_dep || tag == TensorArgType::NO_DEP) continue;
    map_.for_each_dependency(t, writes(tag), [&](int32_t p) { add_producer(n, static_cast<uint32_t>(p)); });
  }
  n.output_bytes = vtop_ - n.heap_offset;
  if (!manual) {
    for (int i = 0; i < nt; ++i) {
      TensorArgType tag = args.tag(i);
      if (tag == TensorArgType::OUTPUT || tag == TensorArgType::NO_DEP || args.tensor(i)->manual_dep) continue;
      map_.insert(*args.tensor(i), idx, tag != TensorArgType::INPUT);
    }
  }
  for (int j = 0; j < args.scalar_count(); ++j) {
    uint64_t v = args.scalar(j);
    uint16_t s = 0;
    for (int b = 0; b < bargs_.scalar_count(); ++b) {
      if (bargs_.scalar(b) == v) {
        s = static_cast<uint16_t>(b + 1);
        break;
      }
    }
    g_.scalars.push_back(v);
    g_.scalar_src.push_back(s);
  }
  n.tensor_count = static_cast<uint32_t>(g_.tmpl.size()) - n.tensor_first;
  n.scalar_count = static_cast<uint32_t>(g_.scalars.size()) - n.scalar_first;
  std::sort(g_.fanin.begin() + n.fanin_first, g_.fanin.end());
  g_.nodes.push_back(n);
  result.set_task_id(PTO2TaskId::make(kRecordRing, static_cast<uint32_t>(idx)));
  return result;
}

Status Recording::finish(const GraphTaskArgs& original, AlignedBuffer* out,
                         uint64_t (*storage_bytes_for)(uint32_t, uint32_t, uint32_t)) {
  if (!failed() && !scopes_.empty())
    fail(std::to_string(scopes_.size()) + " scope(s) opened in the body were not closed");
  if (!failed()) {
    for (int i = 0; i < original.scalar_count(); ++i) {
      if (bargs_.scalar(i) != original.scalar(i)) {
        fail("boundary scalar " + std::to_string(i) + " was mutated by the body");
        break;
      }
    }
  }
  if (failed()) return invalid_argument(error_);
  Status s = build_definition(full_key_, g_, signature_, scalar_partition_, vtop_, storage_bytes_for, out);
  if (!s.ok()) return invalid_argument("Graph body '" + body_ + "': " + s.message());
  return Status::Ok();
}

}  // namespace taskring::graph
