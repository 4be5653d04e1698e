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

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::deps {

enum class Overlap : uint8_t { kNone, kPartial, kCovered };

// What compute_overlap reads of a view, and all a TensorMap entry keeps of
// one: bytes [24, 92) of the ChipTensor (start_offset to strides), laid out
// as there so that taking it is one 68-byte copy; an entry holding the whole
// descriptor (128 bytes, aligned to 64) took 192.
struct Footprint {
  // No initialisers: a footprint is always taken whole from a descriptor
  // (of, assign), never built field by field.
  uint64_t start_offset;  // elements
  int32_t version;
  uint32_t ndims;
  DataType dtype;
  bool manual_dep;
  bool is_contiguous;
  AddressSpace address_space;
  uint32_t shapes[MAX_TENSOR_DIMS];
  uint64_t extent_elem_cache;  // 1 + sum of (shape - 1) * stride, 0 if empty
  uint32_t strides[MAX_TENSOR_DIMS];

  static constexpr size_t kFirst = offsetof(ChipTensor, start_offset);
  static constexpr size_t kBytes = offsetof(ChipTensor, strides) + sizeof(ChipTensor::strides) - kFirst;
  static Footprint of(const ChipTensor& t) {
    Footprint f;
    f.assign(t);
    return f;
  }
  void assign(const ChipTensor& t) { std::memcpy(static_cast<void*>(this), reinterpret_cast<const char*>(&t) + kFirst, kBytes); }
  size_t elem_size() const { return element_size(dtype); }
  uint64_t extent_bytes() const { return extent_elem_cache * elem_size(); }
};
// The copy in Footprint::of relies on these.
static_assert(std::is_trivially_copyable_v<ChipTensor> && std::is_trivially_copyable_v<Footprint>);
static_assert(offsetof(Footprint, version) == offsetof(ChipTensor, version) - Footprint::kFirst);
static_assert(offsetof(Footprint, ndims) == offsetof(ChipTensor, ndims) - Footprint::kFirst);
static_assert(offsetof(Footprint, dtype) == offsetof(ChipTensor, dtype) - Footprint::kFirst);
static_assert(offsetof(Footprint, is_contiguous) == offsetof(ChipTensor, is_contiguous) - Footprint::kFirst);
static_assert(offsetof(Footprint, shapes) == offsetof(ChipTensor, shapes) - Footprint::kFirst);
static_assert(offsetof(Footprint, extent_elem_cache) == offsetof(ChipTensor, extent_elem_cache) - Footprint::kFirst);
static_assert(offsetof(Footprint, strides) == offsetof(ChipTensor, strides) - Footprint::kFirst);
static_assert(Footprint::kBytes <= sizeof(Footprint));

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
