// Inline definitions of ChipTensor's queries and views (included by
// chip_tensor.hpp). Header-only so that an orchestration shared library,
// which links nothing from taskring, can call every tensor method.
#pragma once

#include <cstdio>
#include <limits>

namespace taskring {

inline std::string_view view_error_name(ViewError e) {
  switch (e) {
    case ViewError::kNone: return "none";
    case ViewError::kBadRank: return "rank outside 1..5 or mismatched";
    case ViewError::kOutOfRange: return "window leaves the source tensor";
    case ViewError::kBadDimension: return "dimension index out of range";
    case ViewError::kBadStep: return "slice step is 0";
    case ViewError::kBadPermutation: return "not a permutation of the dimensions";
    case ViewError::kNotContiguous: return "reshape of a non-contiguous view";
    case ViewError::kNumelMismatch: return "reshape changes the element count";
    case ViewError::kBadDataType: return "dtype is not a DataType";
    case ViewError::kBufferTooSmall: return "view extent exceeds the buffer";
    case ViewError::kStrideOverflow: return "stride or offset overflows its field";
    case ViewError::kZeroStride: return "a stride is 0";
  }
  return "unknown";
}

namespace tensor_detail {

inline Status view_status(const char* op, ViewError e, const ChipTensor& src) {
  return invalid_argument(std::string(op) + ": " + std::string(view_error_name(e)) + " (source " + src.describe() +
                          ")");
}

inline ChipTensor poisoned(ViewError e) {
  ChipTensor t;
  t.poison = e;
  return t;
}

}  // namespace tensor_detail

inline uint64_t ChipTensor::numel() const {
  uint64_t n = 1;
  for (uint32_t i = 0; i < ndims && i < MAX_TENSOR_DIMS; ++i) n *= shapes[i];
  return ndims == 0 ? 0 : n;
}

inline uint64_t ChipTensor::element_offset(std::span<const uint32_t> coords) const {
  uint64_t off = start_offset;
  for (size_t i = 0; i < coords.size() && i < ndims; ++i) off += static_cast<uint64_t>(coords[i]) * strides[i];
  return off;
}

inline void ChipTensor::refresh_derived() {
  bool empty = false;
  uint64_t extent = 1;
  for (uint32_t i = 0; i < ndims; ++i) {
    if (shapes[i] == 0)
      empty = true;
    else
      extent += static_cast<uint64_t>(shapes[i] - 1) * strides[i];
  }
  extent_elem_cache = empty ? 0 : extent;
  // A tensor without elements addresses no memory, so it is trivially
  // contiguous (and reshape()-able to any other empty shape).
  bool contiguous = true;
  uint64_t expect = 1;
  for (int i = static_cast<int>(ndims) - 1; i >= 0; --i) {
    if (shapes[i] != 1 && strides[i] != expect) contiguous = false;
    expect *= shapes[i];
  }
  is_contiguous = contiguous || empty;
}

namespace tensor_detail {
// Why `t` is malformed, or kNone. Recomputes the addressed extent from
// shapes and strides (with overflow checks) instead of trusting the cache,
// so a hand-built or corrupted descriptor cannot pass.
inline ViewError check_descriptor(const ChipTensor& t) {
  if (t.is_poisoned()) return t.poison;
  if (!is_valid_data_type(t.dtype)) return ViewError::kBadDataType;
  if (t.ndims < 1 || t.ndims > MAX_TENSOR_DIMS) return ViewError::kBadRank;
  uint64_t extent = 1;
  bool empty = false;
  for (uint32_t i = 0; i < t.ndims; ++i) {
    if (t.strides[i] == 0) return ViewError::kZeroStride;
    if (t.shapes[i] == 0) {
      empty = true;
      continue;
    }
    uint64_t step = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(t.shapes[i] - 1), static_cast<uint64_t>(t.strides[i]), &step) ||
        __builtin_add_overflow(extent, step, &extent)) {
      return ViewError::kStrideOverflow;
    }
  }
  if (empty) return ViewError::kNone;
  uint64_t end_elems = 0;
  uint64_t end_bytes = 0;
  if (__builtin_add_overflow(t.start_offset, extent, &end_elems) ||
      __builtin_mul_overflow(end_elems, static_cast<uint64_t>(t.elem_size()), &end_bytes)) {
    return ViewError::kStrideOverflow;
  }
  return end_bytes > t.buffer.size ? ViewError::kBufferTooSmall : ViewError::kNone;
}
}  // namespace tensor_detail

inline Status ChipTensor::validate() const {
  if (is_poisoned()) {
    return invalid_argument("tensor came from a rejected view: " + std::string(view_error_name(poison)));
  }
  ViewError e = tensor_detail::check_descriptor(*this);
  return e == ViewError::kNone ? Status::Ok() : tensor_detail::view_status("validate", e, *this);
}

inline std::string ChipTensor::describe() const {
  char buf[256];
  int n = std::snprintf(buf, sizeof(buf), "%.*s[", static_cast<int>(data_type_name(dtype).size()),
                        data_type_name(dtype).data());
  for (uint32_t i = 0; i < ndims && i < MAX_TENSOR_DIMS; ++i) {
    n += std::snprintf(buf + n, sizeof(buf) - n, "%s%u", i ? "x" : "", shapes[i]);
  }
  n += std::snprintf(buf + n, sizeof(buf) - n, " strides ");
  for (uint32_t i = 0; i < ndims && i < MAX_TENSOR_DIMS; ++i) {
    n += std::snprintf(buf + n, sizeof(buf) - n, "%s%u", i ? "," : "", strides[i]);
  }
  std::snprintf(buf + n, sizeof(buf) - n, " +%llu] @0x%llx (%llu B)", static_cast<unsigned long long>(start_offset),
                static_cast<unsigned long long>(buffer.addr), static_cast<unsigned long long>(buffer.size));
  return buf;
}

// The view operations proper. Each returns the precise reason it rejected
// its input, so that the checked spellings can explain it in a Status and the
// upstream spellings can store it in the poisoned descriptor.
namespace tensor_detail {

inline ViewError view_impl(const ChipTensor& src, std::span<const uint32_t> new_shapes,
                           std::span<const uint32_t> offsets, ChipTensor* out) {
  if (new_shapes.size() != src.ndims || offsets.size() != src.ndims) return ViewError::kBadRank;
  *out = src;
  bool zero_size = false;
  for (uint32_t i = 0; i < src.ndims; ++i) zero_size |= new_shapes[i] == 0;
  uint64_t start = src.start_offset;
  for (uint32_t i = 0; i < src.ndims; ++i) {
    if (!zero_size && static_cast<uint64_t>(offsets[i]) + new_shapes[i] > src.shapes[i]) return ViewError::kOutOfRange;
    out->shapes[i] = new_shapes[i];
    if (!zero_size) start += static_cast<uint64_t>(offsets[i]) * src.strides[i];
  }
  out->start_offset = start;
  out->refresh_derived();
  return ViewError::kNone;
}

inline ViewError slice_impl(const ChipTensor& src, uint32_t dim, uint32_t start, uint32_t end, uint32_t step,
                            ChipTensor* out) {
  if (dim >= src.ndims || dim >= MAX_TENSOR_DIMS) return ViewError::kBadDimension;
  if (step == 0) return ViewError::kBadStep;
  if (start > end || end > src.shapes[dim]) return ViewError::kOutOfRange;
  uint64_t count = (static_cast<uint64_t>(end - start) + step - 1) / step;
  uint64_t new_stride = static_cast<uint64_t>(src.strides[dim]) * step;
  if (count > 1 && new_stride > std::numeric_limits<uint32_t>::max()) return ViewError::kStrideOverflow;
  *out = src;
  out->shapes[dim] = static_cast<uint32_t>(count);
  if (count > 0) out->start_offset += static_cast<uint64_t>(start) * src.strides[dim];
  out->strides[dim] = (count > 1 || (count == 1 && new_stride <= std::numeric_limits<uint32_t>::max()))
                          ? static_cast<uint32_t>(new_stride)
                          : src.strides[dim];
  out->refresh_derived();
  return ViewError::kNone;
}

inline ViewError transpose_impl(const ChipTensor& src, uint32_t d0, uint32_t d1, ChipTensor* out) {
  if (d0 >= src.ndims || d1 >= src.ndims || d0 >= MAX_TENSOR_DIMS || d1 >= MAX_TENSOR_DIMS)
    return ViewError::kBadDimension;
  *out = src;
  std::swap(out->shapes[d0], out->shapes[d1]);
  std::swap(out->strides[d0], out->strides[d1]);
  out->refresh_derived();
  return ViewError::kNone;
}

inline ViewError permute_impl(const ChipTensor& src, std::span<const uint32_t> perm, ChipTensor* out) {
  if (perm.size() != src.ndims) return ViewError::kBadRank;
  bool seen[MAX_TENSOR_DIMS] = {};
  *out = src;
  for (uint32_t i = 0; i < src.ndims; ++i) {
    if (perm[i] >= src.ndims || seen[perm[i]]) return ViewError::kBadPermutation;
    seen[perm[i]] = true;
    out->shapes[i] = src.shapes[perm[i]];
    out->strides[i] = src.strides[perm[i]];
  }
  out->refresh_derived();
  return ViewError::kNone;
}

inline ViewError reshape_impl(const ChipTensor& src, std::span<const uint32_t> new_shapes, ChipTensor* out) {
  if (new_shapes.empty() || new_shapes.size() > MAX_TENSOR_DIMS) return ViewError::kBadRank;
  if (!src.is_contiguous) return ViewError::kNotContiguous;
  uint64_t n = 1;
  for (uint32_t s : new_shapes) {
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(s), &n)) return ViewError::kNumelMismatch;
  }
  if (n != src.numel()) return ViewError::kNumelMismatch;
  *out = src;
  out->ndims = static_cast<uint32_t>(new_shapes.size());
  uint64_t stride = 1;
  for (int i = static_cast<int>(out->ndims) - 1; i >= 0; --i) {
    if (stride > std::numeric_limits<uint32_t>::max()) return ViewError::kStrideOverflow;
    out->shapes[i] = new_shapes[i];
    out->strides[i] = static_cast<uint32_t>(stride);
    stride *= new_shapes[i] == 0 ? 1 : new_shapes[i];
  }
  for (uint32_t i = out->ndims; i < MAX_TENSOR_DIMS; ++i) out->shapes[i] = out->strides[i] = 0;
  out->refresh_derived();
  return ViewError::kNone;
}

// A poisoned source poisons every view of it with its original reason.
inline Expected<ChipTensor> checked(const char* op, const ChipTensor& src, ViewError e, const ChipTensor& out) {
  if (src.is_poisoned()) return Status(StatusCode::kInvalidArgument, std::string(op) + ": " + src.validate().message());
  if (e != ViewError::kNone) return view_status(op, e, src);
  return out;
}

// The upstream view spellings set manual_dep from their argument; a poisoned
// result stays as it is.
inline ChipTensor with_manual_dep(ChipTensor t, bool manual) {
  if (!t.is_poisoned()) t.manual_dep = manual;
  return t;
}

inline ChipTensor poisoning(const ChipTensor& src, ViewError e, const ChipTensor& out) {
  if (src.is_poisoned()) return poisoned(src.poison);
  if (e != ViewError::kNone) return poisoned(e);
  return out;
}

}  // namespace tensor_detail

inline Expected<ChipTensor> ChipTensor::try_view(std::span<const uint32_t> s, std::span<const uint32_t> o) const {
  ChipTensor out;
  ViewError e = is_poisoned() ? poison : tensor_detail::view_impl(*this, s, o, &out);
  return tensor_detail::checked("view", *this, e, out);
}
inline Expected<ChipTensor> ChipTensor::try_slice(uint32_t dim, uint32_t start, uint32_t end, uint32_t step) const {
  ChipTensor out;
  ViewError e = is_poisoned() ? poison : tensor_detail::slice_impl(*this, dim, start, end, step, &out);
  return tensor_detail::checked("slice", *this, e, out);
}
inline Expected<ChipTensor> ChipTensor::try_transpose(uint32_t d0, uint32_t d1) const {
  ChipTensor out;
  ViewError e = is_poisoned() ? poison : tensor_detail::transpose_impl(*this, d0, d1, &out);
  return tensor_detail::checked("transpose", *this, e, out);
}
inline Expected<ChipTensor> ChipTensor::try_permute(std::span<const uint32_t> perm) const {
  ChipTensor out;
  ViewError e = is_poisoned() ? poison : tensor_detail::permute_impl(*this, perm, &out);
  return tensor_detail::checked("permute", *this, e, out);
}
inline Expected<ChipTensor> ChipTensor::try_reshape(std::span<const uint32_t> s) const {
  ChipTensor out;
  ViewError e = is_poisoned() ? poison : tensor_detail::reshape_impl(*this, s, &out);
  return tensor_detail::checked("reshape", *this, e, out);
}

inline ChipTensor ChipTensor::view(std::span<const uint32_t> s, std::span<const uint32_t> o, bool manual) const {
  ChipTensor out;
  return tensor_detail::with_manual_dep(
      tensor_detail::poisoning(*this, is_poisoned() ? poison : tensor_detail::view_impl(*this, s, o, &out), out),
      manual);
}
inline ChipTensor ChipTensor::slice(uint32_t dim, uint32_t start, uint32_t end, uint32_t step, bool manual) const {
  ChipTensor out;
  return tensor_detail::with_manual_dep(
      tensor_detail::poisoning(
          *this, is_poisoned() ? poison : tensor_detail::slice_impl(*this, dim, start, end, step, &out), out),
      manual);
}
inline ChipTensor ChipTensor::transpose(uint32_t d0, uint32_t d1, bool manual) const {
  ChipTensor out;
  return tensor_detail::with_manual_dep(
      tensor_detail::poisoning(*this, is_poisoned() ? poison : tensor_detail::transpose_impl(*this, d0, d1, &out), out),
      manual);
}
inline ChipTensor ChipTensor::permute(std::span<const uint32_t> perm, bool manual) const {
  ChipTensor out;
  return tensor_detail::with_manual_dep(
      tensor_detail::poisoning(*this, is_poisoned() ? poison : tensor_detail::permute_impl(*this, perm, &out), out),
      manual);
}
inline ChipTensor ChipTensor::reshape(std::span<const uint32_t> s, bool manual) const {
  ChipTensor out;
  return tensor_detail::with_manual_dep(
      tensor_detail::poisoning(*this, is_poisoned() ? poison : tensor_detail::reshape_impl(*this, s, &out), out),
      manual);
}

namespace tensor_detail {

inline ViewError make_impl(uint64_t addr, uint64_t size, std::span<const uint32_t> shapes,
                           std::span<const uint32_t> strides, uint64_t start_offset, DataType dtype, bool manual_dep,
                           int32_t version, AddressSpace space, ChipTensor* out) {
  if (!is_valid_data_type(dtype)) return ViewError::kBadDataType;
  if (shapes.empty() || shapes.size() > MAX_TENSOR_DIMS || strides.size() != shapes.size()) return ViewError::kBadRank;
  ChipTensor t;
  t.buffer = {addr, size};
  t.ndims = static_cast<uint32_t>(shapes.size());
  t.dtype = dtype;
  t.manual_dep = manual_dep;
  t.version = version;
  t.address_space = space;
  t.start_offset = start_offset;
  for (uint32_t i = 0; i < t.ndims; ++i) {
    t.shapes[i] = shapes[i];
    t.strides[i] = strides[i];
  }
  ViewError e = check_descriptor(t);
  *out = t;
  if (e != ViewError::kNone) return e;
  out->refresh_derived();
  return ViewError::kNone;
}

// Row-major element strides of `shapes` (rank already checked).
inline ViewError row_major_strides(std::span<const uint32_t> shapes, uint32_t* strides) {
  uint64_t s = 1;
  for (int i = static_cast<int>(shapes.size()) - 1; i >= 0; --i) {
    if (s > std::numeric_limits<uint32_t>::max()) return ViewError::kStrideOverflow;
    strides[i] = static_cast<uint32_t>(s);
    s *= shapes[i] == 0 ? 1 : shapes[i];
  }
  return ViewError::kNone;
}

inline Status make_status(ViewError e, std::span<const uint32_t> shapes, size_t strides_rank, DataType dtype,
                          const ChipTensor& t) {
  switch (e) {
    case ViewError::kBadDataType:
      return invalid_argument("make_tensor: dtype value " + std::to_string(static_cast<int>(dtype)) +
                              " is not a DataType");
    case ViewError::kBadRank:
      return invalid_argument("make_tensor: rank " + std::to_string(shapes.size()) + " outside 1..5" +
                              (strides_rank != shapes.size()
                                   ? " or strides rank " + std::to_string(strides_rank) + " differs"
                                   : std::string()));
    default: return view_status("make_tensor", e, t);
  }
}

}  // namespace tensor_detail

inline Expected<ChipTensor> try_make_tensor_strided(uint64_t addr, uint64_t size, std::span<const uint32_t> shapes,
                                                    std::span<const uint32_t> strides, uint64_t start_offset,
                                                    DataType dtype, bool manual_dep, int32_t version,
                                                    AddressSpace space) {
  ChipTensor t;
  ViewError e =
      tensor_detail::make_impl(addr, size, shapes, strides, start_offset, dtype, manual_dep, version, space, &t);
  if (e != ViewError::kNone) return tensor_detail::make_status(e, shapes, strides.size(), dtype, t);
  return t;
}

inline Expected<ChipTensor> try_make_tensor(uint64_t addr, uint64_t size, std::span<const uint32_t> shapes,
                                            DataType dtype, bool manual_dep, int32_t version, AddressSpace space) {
  if (shapes.empty() || shapes.size() > MAX_TENSOR_DIMS) {
    return tensor_detail::make_status(ViewError::kBadRank, shapes, shapes.size(), dtype, ChipTensor{});
  }
  uint32_t strides[MAX_TENSOR_DIMS] = {};
  if (tensor_detail::row_major_strides(shapes, strides) != ViewError::kNone) {
    return invalid_argument("make_tensor: a row-major stride overflows 32 bits");
  }
  return try_make_tensor_strided(addr, size, shapes, std::span<const uint32_t>(strides, shapes.size()), 0, dtype,
                                 manual_dep, version, space);
}

inline ChipTensor make_tensor_external(const void* ptr, const uint32_t* shapes, uint32_t ndims, DataType dtype,
                                       bool manual_dep, int32_t version, AddressSpace space) {
  if (ndims < 1 || ndims > MAX_TENSOR_DIMS || shapes == nullptr) return tensor_detail::poisoned(ViewError::kBadRank);
  if (!is_valid_data_type(dtype)) return tensor_detail::poisoned(ViewError::kBadDataType);
  std::span<const uint32_t> shape(shapes, ndims);
  uint64_t bytes = element_size(dtype);
  for (uint32_t s : shape) {
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(s), &bytes))
      return tensor_detail::poisoned(ViewError::kStrideOverflow);
  }
  uint32_t strides[MAX_TENSOR_DIMS] = {};
  if (ViewError e = tensor_detail::row_major_strides(shape, strides); e != ViewError::kNone)
    return tensor_detail::poisoned(e);
  uint64_t addr = reinterpret_cast<uintptr_t>(ptr);
  if (tensor_detail::g_device_address != nullptr) {
    if (uint64_t device = tensor_detail::g_device_address(ptr); device != 0) {
      addr = device;
      space = AddressSpace::DEVICE;
    }
  }
  ChipTensor t;
  ViewError e = tensor_detail::make_impl(addr, bytes, shape, std::span<const uint32_t>(strides, ndims), 0, dtype,
                                         manual_dep, version, space, &t);
  return e == ViewError::kNone ? t : tensor_detail::poisoned(e);
}

}  // namespace taskring
