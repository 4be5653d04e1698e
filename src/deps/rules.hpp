// The dependency rules, stated once for every tracker and every level
// (TensorMap for tmr, L3 and L4; BuildTracker for hbg and Graph recording).
//
// Accesses are kept per buffer (base address), writers (INOUT,
// OUTPUT_EXISTING; at L3/L4 also OUTPUT) apart from readers (INPUT):
//   - a reader probe depends on every overlapping writer (RAW);
//   - a writer probe depends on every overlapping writer (WAW) and reader
//     (WAR; upstream leaves WAR to the user, taskring tracks it);
//   - a writer probe whose region covers an entry replaces it: later probes
//     that would have reached the entry reach the writer, which depends on it.
// Overlap is compute_overlap (below; rules.cpp): exact on one row-major lattice,
// conservative otherwise, so a real dependency is never dropped. Which tags
// a level tracks at all (NO_DEP, manual_dep, device tensors) is the level's
// choice; what happens to a tracked access is decided here.
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

// The strided case of compute_overlap (rules.cpp): the byte ranges meet
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

// What a probe does with one entry it meets.
struct Verdict {
  bool depends;   // the probing task waits for the entry's task
  bool replaces;  // the entry may be dropped: the probing writer stands for it
};

// The verdict for `entry` (a writer, or a reader met by a writer probe).
template <typename Entry>  // ChipTensor or Footprint
inline Verdict judge(const ChipTensor& probe, bool probe_is_writer, const Entry& entry) {
  const Overlap o = compute_overlap(probe, entry);
  return Verdict{o != Overlap::kNone, probe_is_writer && o == Overlap::kCovered};
}

// Whether a probe meets the reader entries of its buffer at all.
constexpr bool meets_readers(bool probe_is_writer) { return probe_is_writer; }

}  // namespace taskring::deps
