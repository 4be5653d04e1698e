// Graph Definition: the recorded body of rt_submit_graph as one pointer-free
// POD image. Every reference is a 32-bit offset from the image base (so the
// image is valid at any address, host or device) and the whole image is
// content-hashed (FNV-1a, 8 bytes per step, hash field zeroed).
//
// Layout: [DefinitionHeader][NodeDef x N][fanin CSR: u32 offsets N+1, u16
// indices E][fanout CSR: same][roots: u16 x R][tensor templates: ChipTensor x
// TA][tensor sources x TA][scalar values: u64 x SA][scalar sources: u16 x SA]
// [boundary tensor signatures x BT][boundary scalar partition: i16 x BS],
// each section 64-byte aligned.
//
// Node i's outputs live at heap_offset(i) inside the replay's one heap
// allocation ([0, required_heap)); storage_bytes more follow it when the
// runtime asks for execution storage in the replay heap (hbg asks for none:
// its replay states live in a pool, hbg/replay_pool.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "aligned_buffer.hpp"
#include "taskring/base/expected.hpp"
#include "taskring/chip/graph_api.hpp"

namespace taskring::graph {

inline constexpr uint64_t kDefinitionMagic = 0x31464544'48505247ull;  // "GRPHDEF1"

enum class TensorSource : uint8_t {
  kBoundaryExact = 0,  // boundary tensor `index` as passed at the call
  kBoundaryView = 1,   // the template's view of boundary tensor `index`'s buffer, starting `offset` bytes
                       // after the boundary tensor's first element
  kInternal = 2,       // output of node `index` (or the node itself): buffer at byte `offset` of the replay heap
};

struct TensorSourceRef {
  TensorSource kind;
  uint8_t pad = 0;
  uint16_t index;
  uint32_t pad2 = 0;
  int64_t offset;
};
static_assert(sizeof(TensorSourceRef) == 16);

struct BoundarySignature {
  uint64_t buffer_size;
  uint32_t shapes[MAX_TENSOR_DIMS];
  uint32_t strides[MAX_TENSOR_DIMS];
  uint32_t ndims;
  uint8_t dtype, tag, manual_dep, contiguous;
  int16_t alias_rep;  // first boundary index with the same buffer (itself when none)
  int16_t pad = 0;
  uint32_t pad2 = 0;
  // Byte range, relative to this tensor's first element, that the body's
  // views of its buffer touch: replay requires it to stay inside the buffer.
  int64_t view_lo, view_hi;
};

struct NodeDef {
  int32_t kernels[3];
  int16_t block_num;
  uint8_t shape;           // l2::TaskShape values
  uint8_t sync_start = 0;  // require_sync_start
  uint32_t tensor_first, tensor_count, scalar_first, scalar_count;
  uint64_t heap_offset, output_bytes;
};

struct DefinitionHeader {
  uint64_t magic;
  uint64_t full_key;
  uint64_t content_hash;
  uint64_t total_bytes;
  uint64_t required_heap;
  uint64_t storage_bytes;
  uint32_t node_count, edge_count, root_count;
  uint32_t boundary_tensor_count, boundary_scalar_count;
  uint32_t tensor_arg_count, scalar_arg_count;
  uint32_t off_nodes, off_fanin_offsets, off_fanin_idx, off_fanout_offsets, off_fanout_idx, off_roots;
  uint32_t off_tensor_tmpl, off_tensor_src, off_scalars, off_scalar_src, off_signature, off_scalar_partition;
  uint32_t pad = 0;
};

// Typed access to a Definition image at `base` (host or device view).
struct DefinitionView {
  const uint8_t* base = nullptr;
  const DefinitionHeader& h() const { return *reinterpret_cast<const DefinitionHeader*>(base); }
  template <typename T>
  const T* sec(uint32_t off) const {
    return reinterpret_cast<const T*>(base + off);
  }
  const NodeDef* nodes() const { return sec<NodeDef>(h().off_nodes); }
  const uint32_t* fanin_offsets() const { return sec<uint32_t>(h().off_fanin_offsets); }
  const uint16_t* fanin_idx() const { return sec<uint16_t>(h().off_fanin_idx); }
  const uint32_t* fanout_offsets() const { return sec<uint32_t>(h().off_fanout_offsets); }
  const uint16_t* fanout_idx() const { return sec<uint16_t>(h().off_fanout_idx); }
  const uint16_t* roots() const { return sec<uint16_t>(h().off_roots); }
  const ChipTensor* tensor_tmpl() const { return sec<ChipTensor>(h().off_tensor_tmpl); }
  const TensorSourceRef* tensor_src() const { return sec<TensorSourceRef>(h().off_tensor_src); }
  const uint64_t* scalars() const { return sec<uint64_t>(h().off_scalars); }
  const uint16_t* scalar_src() const { return sec<uint16_t>(h().off_scalar_src); }  // 0 static, i+1 boundary i
  const BoundarySignature* signature() const { return sec<BoundarySignature>(h().off_signature); }
  const int16_t* scalar_partition() const { return sec<int16_t>(h().off_scalar_partition); }
};

// What a recording hands the builder: one entry per node, whose arguments
// and producers are ranges of the RecordedGraph's flat arrays (one growing
// array each per recording, not vectors per node).
struct RecordedNode {
  int32_t kernels[3];
  int16_t block_num;
  uint8_t shape;
  bool sync_start = false;
  uint32_t tensor_first = 0, tensor_count = 0;  // into tmpl / src
  uint32_t scalar_first = 0, scalar_count = 0;  // into scalars / scalar_src
  uint32_t fanin_first = 0, fanin_count = 0;    // into fanin
  uint64_t heap_offset = 0, output_bytes = 0;
};

struct RecordedGraph {
  std::vector<RecordedNode> nodes;
  std::vector<ChipTensor> tmpl;  // as recorded (buffer.addr of non-boundary sources is ignored)
  std::vector<TensorSourceRef> src;
  std::vector<uint64_t> scalars;
  std::vector<uint16_t> scalar_src;  // 0 static, i+1 boundary scalar i
  std::vector<uint16_t> fanin;       // per node: producer indices, unique, sorted, each < the node
  // Empties every array and keeps its capacity (a reused recording).
  void clear() {
    nodes.clear();
    tmpl.clear();
    src.clear();
    scalars.clear();
    scalar_src.clear();
    fanin.clear();
  }
};

// FNV-1a over 8-byte words (the tail bytewise).
uint64_t hash_image(const uint8_t* data, uint64_t bytes);

// Boundary signature of `args` (alias partition included).
void make_signature(const GraphTaskArgs& args, std::vector<BoundarySignature>* tensors,
                    std::vector<int16_t>* scalar_partition);

// Builds the image. `storage_bytes_for` gives the execution storage the
// scheduler needs for (nodes, tensor args, scalar args).
Status build_definition(uint64_t full_key, const RecordedGraph& graph,
                        const std::vector<BoundarySignature>& signature, const std::vector<int16_t>& scalar_partition,
                        uint64_t required_heap, uint64_t (*storage_bytes_for)(uint32_t, uint32_t, uint32_t),
                        AlignedBuffer* out);

// Empty string when `args` matches the Definition's boundary; otherwise what
// differs ("tensor 3: shape[1] 64 != recorded 128").
std::string boundary_mismatch(const DefinitionView& def, const GraphTaskArgs& args);

// Structural checks a consumer runs before trusting an image of
// `available_bytes` (offsets, counts, CSR order, roots, sources, limits).
// The hash is checked separately (once per image).
Status validate_definition(const DefinitionView& def, uint64_t available_bytes);

}  // namespace taskring::graph
