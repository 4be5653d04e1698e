#include "deps/rules.hpp"

namespace taskring::deps {

namespace {

// Coordinates of a view's first element on the lattice of its strides, when
// the strides form a row-major chain (each a multiple of the next, the last
// 1) and the view fits the lattice; false otherwise.
template <typename View>
bool lattice_coords(const View& t, uint64_t* coords) {
  uint32_t n = t.ndims;
  if (t.strides[n - 1] != 1) return false;
  uint64_t off = t.start_offset;
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t s = t.strides[i];
    if (i + 1 < n && (s % t.strides[i + 1]) != 0) return false;
    coords[i] = off / s;
    off %= s;
    if (i > 0) {
      uint64_t extent_i = t.strides[i - 1] / s;  // lattice size of dim i
      if (coords[i] + t.shapes[i] > extent_i) return false;
    }
  }
  return true;
}

template <typename Entry>
Overlap overlap_of(const ChipTensor& p, const Entry& e) {
  if (p.dtype != e.dtype || p.ndims != e.ndims) return Overlap::kPartial;
  for (uint32_t i = 0; i < p.ndims; ++i) {
    if (p.strides[i] != e.strides[i]) return Overlap::kPartial;
  }
  uint64_t pc[MAX_TENSOR_DIMS], ec[MAX_TENSOR_DIMS];
  if (!lattice_coords(p, pc) || !lattice_coords(e, ec)) return Overlap::kPartial;
  bool covers = true;
  for (uint32_t i = 0; i < p.ndims; ++i) {
    uint64_t p0 = pc[i], p1 = pc[i] + p.shapes[i], e0 = ec[i], e1 = ec[i] + e.shapes[i];
    if (p1 <= e0 || e1 <= p0) return Overlap::kNone;
    if (!(p0 <= e0 && e1 <= p1)) covers = false;
  }
  return covers ? Overlap::kCovered : Overlap::kPartial;
}

}  // namespace

Overlap strided_overlap(const ChipTensor& probe, const ChipTensor& entry) { return overlap_of(probe, entry); }
Overlap strided_overlap(const ChipTensor& probe, const Footprint& entry) { return overlap_of(probe, entry); }

}  // namespace taskring::deps
