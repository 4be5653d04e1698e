#include "definition.hpp"
#include "taskring/base/align.hpp"

#include <algorithm>
#include <cstring>

namespace taskring::graph {

namespace {

std::string where_tensor(int i) { return "tensor " + std::to_string(i) + ": "; }

}  // namespace

uint64_t hash_image(const uint8_t* data, uint64_t bytes) {
  uint64_t h = graph_detail::kFnvOffset;
  uint64_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w;
    std::memcpy(&w, data + i, 8);
    h ^= w;
    h *= graph_detail::kFnvPrime;
  }
  for (; i < bytes; ++i) {
    h ^= data[i];
    h *= graph_detail::kFnvPrime;
  }
  return h;
}

void make_signature(const GraphTaskArgs& args, std::vector<BoundarySignature>* tensors,
                    std::vector<int16_t>* scalar_partition) {
  const int nt = args.tensor_count();
  tensors->assign(static_cast<size_t>(nt), BoundarySignature{});
  for (int i = 0; i < nt; ++i) {
    BoundarySignature& s = (*tensors)[static_cast<size_t>(i)];
    s.tag = static_cast<uint8_t>(args.tag(i));
    const ChipTensor* t = args.tensor(i);
    if (t == nullptr) continue;  // OUTPUT: never recorded (the caller falls back)
    s.buffer_size = t->buffer.size;
    s.ndims = t->ndims;
    for (uint32_t d = 0; d < t->ndims && d < MAX_TENSOR_DIMS; ++d) {
      s.shapes[d] = t->shapes[d];
      s.strides[d] = t->strides[d];
    }
    s.dtype = static_cast<uint8_t>(t->dtype);
    s.manual_dep = t->manual_dep;
    s.contiguous = t->is_contiguous;
    s.alias_rep = static_cast<int16_t>(i);
    for (int j = 0; j < i; ++j) {
      const ChipTensor* o = args.tensor(j);
      if (o != nullptr && o->buffer.addr == t->buffer.addr && o->buffer.size == t->buffer.size) {
        s.alias_rep = static_cast<int16_t>(j);
        break;
      }
    }
  }
  const int ns = args.scalar_count();
  scalar_partition->assign(static_cast<size_t>(ns), 0);
  for (int i = 0; i < ns; ++i) {
    int16_t rep = static_cast<int16_t>(i);
    for (int j = 0; j < i; ++j) {
      if (args.scalar(j) == args.scalar(i)) {
        rep = static_cast<int16_t>(j);
        break;
      }
    }
    (*scalar_partition)[static_cast<size_t>(i)] = rep;
  }
}

Status build_definition(uint64_t full_key, const RecordedGraph& graph,
                        const std::vector<BoundarySignature>& signature, const std::vector<int16_t>& scalar_partition,
                        uint64_t required_heap, uint64_t (*storage_bytes_for)(uint32_t, uint32_t, uint32_t),
                        AlignedBuffer* out) {
  const std::vector<RecordedNode>& nodes = graph.nodes;
  const uint32_t n = static_cast<uint32_t>(nodes.size());
  if (n > static_cast<uint32_t>(GRAPH_MAX_NODES)) {
    return invalid_argument("Definition has " + std::to_string(n) + " nodes; the limit is " +
                            std::to_string(GRAPH_MAX_NODES) + " (GRAPH_MAX_NODES)");
  }
  const uint32_t edges = static_cast<uint32_t>(graph.fanin.size());
  const uint32_t ta = static_cast<uint32_t>(graph.tmpl.size());
  const uint32_t sa = static_cast<uint32_t>(graph.scalars.size());
  uint32_t roots = 0;
  for (const RecordedNode& r : nodes) roots += r.fanin_count == 0 ? 1 : 0;
  uint64_t off = align_up(sizeof(DefinitionHeader), 64);
  auto place = [&](uint64_t bytes) {
    uint64_t at = off;
    off = align_up(off + bytes, 64);
    return static_cast<uint32_t>(at);
  };
  DefinitionHeader h{};
  h.magic = kDefinitionMagic;
  h.full_key = full_key;
  h.required_heap = required_heap;
  h.storage_bytes = storage_bytes_for(n, ta, sa);
  h.node_count = n;
  h.edge_count = edges;
  h.root_count = roots;
  h.boundary_tensor_count = static_cast<uint32_t>(signature.size());
  h.boundary_scalar_count = static_cast<uint32_t>(scalar_partition.size());
  h.tensor_arg_count = ta;
  h.scalar_arg_count = sa;
  h.off_nodes = place(sizeof(NodeDef) * n);
  h.off_fanin_offsets = place(4ull * (n + 1));
  h.off_fanin_idx = place(2ull * edges);
  h.off_fanout_offsets = place(4ull * (n + 1));
  h.off_fanout_idx = place(2ull * edges);
  h.off_roots = place(2ull * roots);
  h.off_tensor_tmpl = place(sizeof(ChipTensor) * ta);
  h.off_tensor_src = place(sizeof(TensorSourceRef) * ta);
  h.off_scalars = place(8ull * sa);
  h.off_scalar_src = place(2ull * sa);
  h.off_signature = place(sizeof(BoundarySignature) * signature.size());
  h.off_scalar_partition = place(2ull * scalar_partition.size());
  h.total_bytes = off;
  if (off > UINT32_MAX) return invalid_argument("Definition image exceeds 4 GiB");
  if (!out->assign_zero(off))
    return resource_exhausted("cannot allocate " + std::to_string(off) + " bytes for a Definition");
  std::memcpy(out->data(), &h, sizeof(h));
  uint8_t* b = out->data();
  auto* nd = reinterpret_cast<NodeDef*>(b + h.off_nodes);
  auto* fio = reinterpret_cast<uint32_t*>(b + h.off_fanin_offsets);
  auto* foo = reinterpret_cast<uint32_t*>(b + h.off_fanout_offsets);
  auto* foi = reinterpret_cast<uint16_t*>(b + h.off_fanout_idx);
  auto* rt = reinterpret_cast<uint16_t*>(b + h.off_roots);
  auto* tt = reinterpret_cast<ChipTensor*>(b + h.off_tensor_tmpl);
  auto* sv = reinterpret_cast<uint64_t*>(b + h.off_scalars);
  // The flat arrays are the sections, but for what a Definition never holds:
  // pointers (sources say where a buffer comes from), owners, and the values
  // of boundary-sourced scalars (each replay brings its own).
  if (ta != 0) {
    std::memcpy(static_cast<void*>(tt), graph.tmpl.data(), sizeof(ChipTensor) * ta);
    std::memcpy(b + h.off_tensor_src, graph.src.data(), sizeof(TensorSourceRef) * ta);
  }
  for (uint32_t t = 0; t < ta; ++t) {
    tt[t].buffer.addr = 0;
    tt[t].owner_task_id = kInvalidTaskId;
  }
  for (uint32_t s = 0; s < sa; ++s) sv[s] = graph.scalar_src[s] != 0 ? 0 : graph.scalars[s];
  if (sa != 0) std::memcpy(b + h.off_scalar_src, graph.scalar_src.data(), 2ull * sa);
  if (edges != 0) std::memcpy(b + h.off_fanin_idx, graph.fanin.data(), 2ull * edges);
  std::vector<uint32_t> fanout_count(n + 1, 0);
  uint32_t r = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const RecordedNode& rn = nodes[i];
    NodeDef& d = nd[i];
    std::memcpy(d.kernels, rn.kernels, sizeof(d.kernels));
    d.block_num = rn.block_num;
    d.sync_start = rn.sync_start ? 1 : 0;
    d.shape = rn.shape;
    d.tensor_first = rn.tensor_first;
    d.tensor_count = rn.tensor_count;
    d.scalar_first = rn.scalar_first;
    d.scalar_count = rn.scalar_count;
    d.heap_offset = rn.heap_offset;
    d.output_bytes = rn.output_bytes;
    fio[i] = rn.fanin_first;
    for (uint32_t k = 0; k < rn.fanin_count; ++k) fanout_count[graph.fanin[rn.fanin_first + k]]++;
    if (rn.fanin_count == 0) rt[r++] = static_cast<uint16_t>(i);
  }
  fio[n] = edges;
  uint32_t acc = 0;
  for (uint32_t i = 0; i < n; ++i) {
    foo[i] = acc;
    acc += fanout_count[i];
  }
  foo[n] = acc;
  std::vector<uint32_t> cursor(foo, foo + n);
  for (uint32_t i = 0; i < n; ++i) {
    const RecordedNode& rn = nodes[i];
    for (uint32_t k = 0; k < rn.fanin_count; ++k) foi[cursor[graph.fanin[rn.fanin_first + k]]++] = static_cast<uint16_t>(i);
  }
  if (!signature.empty()) {
    std::memcpy(b + h.off_signature, signature.data(), sizeof(BoundarySignature) * signature.size());
  }
  if (!scalar_partition.empty()) {
    std::memcpy(b + h.off_scalar_partition, scalar_partition.data(), 2 * scalar_partition.size());
  }
  uint64_t hash = hash_image(b, off);
  reinterpret_cast<DefinitionHeader*>(b)->content_hash = hash;
  return Status::Ok();
}

std::string boundary_mismatch(const DefinitionView& def, const GraphTaskArgs& args) {
  const DefinitionHeader& h = def.h();
  if (static_cast<uint32_t>(args.tensor_count()) != h.boundary_tensor_count) {
    return std::to_string(args.tensor_count()) + " boundary tensors != recorded " +
           std::to_string(h.boundary_tensor_count);
  }
  if (static_cast<uint32_t>(args.scalar_count()) != h.boundary_scalar_count) {
    return std::to_string(args.scalar_count()) + " boundary scalars != recorded " +
           std::to_string(h.boundary_scalar_count);
  }
  const BoundarySignature* sig = def.signature();
  for (int i = 0; i < args.tensor_count(); ++i) {
    const BoundarySignature& s = sig[i];
    if (static_cast<uint8_t>(args.tag(i)) != s.tag) {
      return where_tensor(i) + "tag " + std::string(tensor_arg_type_name(args.tag(i))) + " != recorded " +
             std::string(tensor_arg_type_name(static_cast<TensorArgType>(s.tag)));
    }
    const ChipTensor& t = *args.tensor(i);
    if (t.buffer.size != s.buffer_size) {
      return where_tensor(i) + "buffer size " + std::to_string(t.buffer.size) + " != recorded " +
             std::to_string(s.buffer_size);
    }
    if (t.ndims != s.ndims)
      return where_tensor(i) + "rank " + std::to_string(t.ndims) + " != recorded " + std::to_string(s.ndims);
    if (static_cast<uint8_t>(t.dtype) != s.dtype) return where_tensor(i) + "dtype differs from the recorded one";
    for (uint32_t d = 0; d < t.ndims; ++d) {
      if (t.shapes[d] != s.shapes[d]) {
        return where_tensor(i) + "shape[" + std::to_string(d) + "] " + std::to_string(t.shapes[d]) + " != recorded " +
               std::to_string(s.shapes[d]);
      }
      if (t.strides[d] != s.strides[d]) {
        return where_tensor(i) + "stride[" + std::to_string(d) + "] " + std::to_string(t.strides[d]) + " != recorded " +
               std::to_string(s.strides[d]);
      }
    }
    if (t.manual_dep != (s.manual_dep != 0)) return where_tensor(i) + "manual_dep differs from the recorded one";
    if (t.is_contiguous != (s.contiguous != 0)) return where_tensor(i) + "contiguity differs from the recorded one";
    int16_t rep = static_cast<int16_t>(i);
    for (int j = 0; j < i; ++j) {
      const ChipTensor& o = *args.tensor(j);
      if (o.buffer.addr == t.buffer.addr && o.buffer.size == t.buffer.size) {
        rep = static_cast<int16_t>(j);
        break;
      }
    }
    if (rep != s.alias_rep) {
      return where_tensor(i) + "aliasing differs: shares its buffer with boundary tensor " + std::to_string(rep) +
             " but the recording had " + std::to_string(s.alias_rep);
    }
    int64_t start = static_cast<int64_t>(t.start_offset * t.elem_size());
    if (start + s.view_lo < 0 || static_cast<uint64_t>(start + s.view_hi) > t.buffer.size) {
      return where_tensor(i) + "start_offset " + std::to_string(t.start_offset) +
             " puts the body's views of this buffer outside it";
    }
  }
  const int16_t* sp = def.scalar_partition();
  for (int i = 0; i < args.scalar_count(); ++i) {
    int16_t rep = static_cast<int16_t>(i);
    for (int j = 0; j < i; ++j) {
      if (args.scalar(j) == args.scalar(i)) {
        rep = static_cast<int16_t>(j);
        break;
      }
    }
    if (rep != sp[i]) {
      return "scalar " + std::to_string(i) + ": equality with other boundary scalars differs from the recording";
    }
  }
  return {};
}

Status validate_definition(const DefinitionView& def, uint64_t available_bytes) {
  auto bad = [](const std::string& m) { return invalid_argument("Graph Definition invalid: " + m); };
  if (available_bytes < sizeof(DefinitionHeader)) return bad("shorter than its header");
  const DefinitionHeader& h = def.h();
  if (h.magic != kDefinitionMagic) return bad("bad magic");
  if (h.total_bytes > available_bytes) return bad("total_bytes beyond the buffer");
  const uint32_t n = h.node_count;
  if (n > static_cast<uint32_t>(GRAPH_MAX_NODES)) return bad("node count " + std::to_string(n) + " over the limit");
  if (h.boundary_tensor_count > static_cast<uint32_t>(GRAPH_MAX_TENSOR_ARGS) ||
      h.boundary_scalar_count > static_cast<uint32_t>(GRAPH_MAX_SCALAR_ARGS)) {
    return bad("boundary counts over the limit");
  }
  auto in = [&](uint32_t off, uint64_t bytes) { return off + bytes <= h.total_bytes; };
  if (!in(h.off_nodes, sizeof(NodeDef) * n) || !in(h.off_fanin_offsets, 4ull * (n + 1)) ||
      !in(h.off_fanin_idx, 2ull * h.edge_count) || !in(h.off_fanout_offsets, 4ull * (n + 1)) ||
      !in(h.off_fanout_idx, 2ull * h.edge_count) || !in(h.off_roots, 2ull * h.root_count) ||
      !in(h.off_tensor_tmpl, sizeof(ChipTensor) * h.tensor_arg_count) ||
      !in(h.off_tensor_src, sizeof(TensorSourceRef) * h.tensor_arg_count) ||
      !in(h.off_scalars, 8ull * h.scalar_arg_count) || !in(h.off_scalar_src, 2ull * h.scalar_arg_count) ||
      !in(h.off_signature, sizeof(BoundarySignature) * h.boundary_tensor_count) ||
      !in(h.off_scalar_partition, 2ull * h.boundary_scalar_count)) {
    return bad("a section lies outside the image");
  }
  const uint32_t* fio = def.fanin_offsets();
  const uint16_t* fii = def.fanin_idx();
  const uint32_t* foo = def.fanout_offsets();
  const uint16_t* foi = def.fanout_idx();
  if (fio[0] != 0 || fio[n] != h.edge_count || foo[0] != 0 || foo[n] != h.edge_count) return bad("CSR ends");
  uint32_t roots = 0;
  const NodeDef* nd = def.nodes();
  for (uint32_t i = 0; i < n; ++i) {
    if (fio[i + 1] < fio[i] || foo[i + 1] < foo[i]) return bad("CSR offsets not monotone at node " + std::to_string(i));
    for (uint32_t k = fio[i]; k < fio[i + 1]; ++k) {
      if (fii[k] >= i) return bad("fanin of node " + std::to_string(i) + " is not an earlier node");
    }
    for (uint32_t k = foo[i]; k < foo[i + 1]; ++k) {
      if (foi[k] <= i || foi[k] >= n) return bad("fanout of node " + std::to_string(i) + " is not a later node");
    }
    if (fio[i] == fio[i + 1]) {
      if (roots >= h.root_count || def.roots()[roots] != i) return bad("roots do not match the nodes without fanin");
      ++roots;
    }
    const NodeDef& d = nd[i];
    if (d.tensor_count > static_cast<uint32_t>(CORE_MAX_TENSOR_ARGS) ||
        d.scalar_count > static_cast<uint32_t>(CORE_MAX_SCALAR_ARGS) ||
        d.tensor_first + d.tensor_count > h.tensor_arg_count || d.scalar_first + d.scalar_count > h.scalar_arg_count) {
      return bad("argument ranges of node " + std::to_string(i));
    }
    if (d.heap_offset + d.output_bytes > h.required_heap) return bad("heap window of node " + std::to_string(i));
    if (d.block_num < 1) return bad("block_num of node " + std::to_string(i));
    for (uint32_t k = d.tensor_first; k < d.tensor_first + d.tensor_count; ++k) {
      const TensorSourceRef& s = def.tensor_src()[k];
      if (s.kind == TensorSource::kInternal) {
        if (s.index > i || s.offset < 0) return bad("internal source of node " + std::to_string(i));
      } else if (s.kind == TensorSource::kBoundaryExact || s.kind == TensorSource::kBoundaryView) {
        if (s.index >= h.boundary_tensor_count) return bad("boundary source of node " + std::to_string(i));
      } else {
        return bad("tensor source kind of node " + std::to_string(i));
      }
    }
    for (uint32_t k = d.scalar_first; k < d.scalar_first + d.scalar_count; ++k) {
      if (def.scalar_src()[k] > h.boundary_scalar_count) return bad("scalar source of node " + std::to_string(i));
    }
  }
  if (roots != h.root_count) return bad("root count");
  return Status::Ok();
}

}  // namespace taskring::graph
