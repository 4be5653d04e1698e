// Overlap of two views of one buffer, the question every dependency tracker
// (TensorMap, BuildTracker; rules.hpp states what they do with the answer)
// asks. Exact for views on one row-major lattice, conservative otherwise: a
// real overlap is never reported as kNone.
#pragma once

#include <cstdint>

#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::deps {

enum class Overlap : uint8_t { kNone, kPartial, kCovered };

// What compute_overlap reads of a view, and all a TensorMap entry keeps of
// one: 64 bytes where a ChipTensor is 128 (aligned to 64, so an entry
// holding one took 192). Members are named as ChipTensor's.
struct Footprint {
  uint64_t start_offset = 0;       // elements
  uint64_t extent_elem_cache = 0;  // 1 + sum of (shape - 1) * stride, 0 if empty
  uint32_t shapes[MAX_TENSOR_DIMS] = {};
  uint32_t strides[MAX_TENSOR_DIMS] = {};
  uint32_t ndims = 0;
  DataType dtype = DataType::FLOAT32;
  bool is_contiguous = false;

  static Footprint of(const ChipTensor& t) {
    Footprint f;
    f.start_offset = t.start_offset;
    f.extent_elem_cache = t.extent_elem_cache;
    for (uint32_t i = 0; i < MAX_TENSOR_DIMS; ++i) {
      f.shapes[i] = t.shapes[i];
      f.strides[i] = t.strides[i];
    }
    f.ndims = t.ndims;
    f.dtype = t.dtype;
    f.is_contiguous = t.is_contiguous;
    return f;
  }
  size_t elem_size() const { return element_size(dtype); }
  uint64_t extent_bytes() const { return extent_elem_cache * elem_size(); }
};
static_assert(sizeof(Footprint) == 64, "a footprint is one cache line");

// The strided case of compute_overlap (overlap.cpp): the byte ranges meet
// and one view is not contiguous.
Overlap strided_overlap(const ChipTensor& probe, const ChipTensor& entry);
Overlap strided_overlap(const ChipTensor& probe, const Footprint& entry);

// Overlap of `probe` against `entry` (a ChipTensor or a Footprint), both
// views of the same buffer. kCovered: probe contains every element of entry.
// Inline for the common case (disjoint or both contiguous: a submit asks
// once per tracked tensor and entry met).
template <typename Entry>
inline Overlap compute_overlap(const ChipTensor& p, const Entry& e) {
  if (p.extent_elem_cache == 0 || e.extent_elem_cache == 0) return Overlap::kNone;
  const uint64_t pb = p.start_offset * p.elem_size(), pe = pb + p.extent_bytes();
  const uint64_t eb = e.start_offset * e.elem_size(), ee = eb + e.extent_bytes();
  if (pe <= eb || ee <= pb) return Overlap::kNone;
  if (p.is_contiguous && e.is_contiguous) return (pb <= eb && ee <= pe) ? Overlap::kCovered : Overlap::kPartial;
  return strided_overlap(p, e);
}

}  // namespace taskring::deps
