#include "taskring/tensor/chip_tensor.hpp"

#include <cstdio>
#include <limits>

namespace taskring {

std::string_view view_error_name(ViewError e) {
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
  }
  return "unknown";
}

namespace {

Status view_status(const char* op, ViewError e, const ChipTensor& src) {
  return invalid_argument(std::string(op) + ": " + std::string(view_error_name(e)) + " (source " + src.describe() +
                          ")");
}

ChipTensor poisoned(ViewError e) {
  ChipTensor t;
  t.poison = e;
  return t;
}

// Maps a checked result onto the upstream-spelling contract.
ChipTensor or_poison(const Expected<ChipTensor>& r, ViewError fallback) {
  if (r.ok()) return *r;
  // The code was encoded in the message's originating call; keep a generic
  // reason when we cannot recover it.
  return poisoned(fallback);
}

}  // namespace

uint64_t ChipTensor::numel() const {
  uint64_t n = 1;
  for (uint32_t i = 0; i < ndims && i < MAX_TENSOR_DIMS; ++i) n *= shapes[i];
  return ndims == 0 ? 0 : n;
}

uint64_t ChipTensor::element_offset(std::span<const uint32_t> coords) const {
  uint64_t off = start_offset;
  for (size_t i = 0; i < coords.size() && i < ndims; ++i) off += static_cast<uint64_t>(coords[i]) * strides[i];
  return off;
}

void ChipTensor::refresh_derived() {
  bool empty = false;
  uint64_t extent = 1;
  for (uint32_t i = 0; i < ndims; ++i) {
    if (shapes[i] == 0) empty = true;
    else extent += static_cast<uint64_t>(shapes[i] - 1) * strides[i];
  }
  extent_elem_cache = empty ? 0 : extent;
  bool contiguous = true;
  uint64_t expect = 1;
  for (int i = static_cast<int>(ndims) - 1; i >= 0; --i) {
    if (shapes[i] != 1 && strides[i] != expect) contiguous = false;
    expect *= shapes[i];
  }
  is_contiguous = contiguous;
}

Status ChipTensor::validate() const {
  if (is_poisoned()) return invalid_argument("tensor came from a rejected view: " + std::string(view_error_name(poison)));
  if (!is_valid_data_type(dtype)) return view_status("validate", ViewError::kBadDataType, *this);
  if (ndims < 1 || ndims > MAX_TENSOR_DIMS) return view_status("validate", ViewError::kBadRank, *this);
  for (uint32_t i = 0; i < ndims; ++i) {
    if (strides[i] == 0) return invalid_argument("validate: stride of dim " + std::to_string(i) + " is 0 (" + describe() + ")");
  }
  if (extent_elem_cache > 0) {
    uint64_t end_bytes = (start_offset + extent_elem_cache) * elem_size();
    if (end_bytes > buffer.size) return view_status("validate", ViewError::kBufferTooSmall, *this);
  }
  return Status::Ok();
}

std::string ChipTensor::describe() const {
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

Expected<ChipTensor> ChipTensor::try_view(std::span<const uint32_t> new_shapes,
                                          std::span<const uint32_t> offsets) const {
  if (is_poisoned()) return validate();
  if (new_shapes.size() != ndims || offsets.size() != ndims) return view_status("view", ViewError::kBadRank, *this);
  ChipTensor out = *this;
  bool zero_size = false;
  for (uint32_t i = 0; i < ndims; ++i) zero_size |= new_shapes[i] == 0;
  uint64_t start = start_offset;
  for (uint32_t i = 0; i < ndims; ++i) {
    if (!zero_size && static_cast<uint64_t>(offsets[i]) + new_shapes[i] > shapes[i]) {
      return view_status("view", ViewError::kOutOfRange, *this);
    }
    out.shapes[i] = new_shapes[i];
    if (!zero_size) start += static_cast<uint64_t>(offsets[i]) * strides[i];
  }
  out.start_offset = start;
  out.refresh_derived();
  return out;
}

Expected<ChipTensor> ChipTensor::try_slice(uint32_t dim, uint32_t start, uint32_t end, uint32_t step) const {
  if (is_poisoned()) return validate();
  if (dim >= ndims) return view_status("slice", ViewError::kBadDimension, *this);
  if (step == 0) return view_status("slice", ViewError::kBadStep, *this);
  if (start > end || end > shapes[dim]) return view_status("slice", ViewError::kOutOfRange, *this);
  uint64_t count = (static_cast<uint64_t>(end - start) + step - 1) / step;
  uint64_t new_stride = static_cast<uint64_t>(strides[dim]) * step;
  if (new_stride > std::numeric_limits<uint32_t>::max()) return view_status("slice", ViewError::kStrideOverflow, *this);
  ChipTensor out = *this;
  out.shapes[dim] = static_cast<uint32_t>(count);
  if (count > 0) out.start_offset += static_cast<uint64_t>(start) * strides[dim];
  out.strides[dim] = count > 1 ? static_cast<uint32_t>(new_stride) : strides[dim];
  out.refresh_derived();
  return out;
}

Expected<ChipTensor> ChipTensor::try_transpose(uint32_t d0, uint32_t d1) const {
  if (is_poisoned()) return validate();
  if (d0 >= ndims || d1 >= ndims) return view_status("transpose", ViewError::kBadDimension, *this);
  ChipTensor out = *this;
  std::swap(out.shapes[d0], out.shapes[d1]);
  std::swap(out.strides[d0], out.strides[d1]);
  out.refresh_derived();
  return out;
}

Expected<ChipTensor> ChipTensor::try_permute(std::span<const uint32_t> perm) const {
  if (is_poisoned()) return validate();
  if (perm.size() != ndims) return view_status("permute", ViewError::kBadRank, *this);
  bool seen[MAX_TENSOR_DIMS] = {};
  ChipTensor out = *this;
  for (uint32_t i = 0; i < ndims; ++i) {
    if (perm[i] >= ndims || seen[perm[i]]) return view_status("permute", ViewError::kBadPermutation, *this);
    seen[perm[i]] = true;
    out.shapes[i] = shapes[perm[i]];
    out.strides[i] = strides[perm[i]];
  }
  out.refresh_derived();
  return out;
}

Expected<ChipTensor> ChipTensor::try_reshape(std::span<const uint32_t> new_shapes) const {
  if (is_poisoned()) return validate();
  if (new_shapes.empty() || new_shapes.size() > MAX_TENSOR_DIMS) return view_status("reshape", ViewError::kBadRank, *this);
  if (!is_contiguous) return view_status("reshape", ViewError::kNotContiguous, *this);
  uint64_t n = 1;
  for (uint32_t s : new_shapes) n *= s;
  if (n != numel()) return view_status("reshape", ViewError::kNumelMismatch, *this);
  ChipTensor out = *this;
  out.ndims = static_cast<uint32_t>(new_shapes.size());
  uint64_t stride = 1;
  for (int i = static_cast<int>(out.ndims) - 1; i >= 0; --i) {
    out.shapes[i] = new_shapes[i];
    if (stride > std::numeric_limits<uint32_t>::max()) return view_status("reshape", ViewError::kStrideOverflow, *this);
    out.strides[i] = static_cast<uint32_t>(stride);
    stride *= new_shapes[i] == 0 ? 1 : new_shapes[i];
  }
  for (uint32_t i = out.ndims; i < MAX_TENSOR_DIMS; ++i) out.shapes[i] = out.strides[i] = 0;
  out.refresh_derived();
  return out;
}

ChipTensor ChipTensor::view(std::span<const uint32_t> s, std::span<const uint32_t> o) const {
  return or_poison(try_view(s, o), ViewError::kOutOfRange);
}
ChipTensor ChipTensor::slice(uint32_t dim, uint32_t start, uint32_t end, uint32_t step) const {
  return or_poison(try_slice(dim, start, end, step), ViewError::kOutOfRange);
}
ChipTensor ChipTensor::transpose(uint32_t d0, uint32_t d1) const {
  return or_poison(try_transpose(d0, d1), ViewError::kBadDimension);
}
ChipTensor ChipTensor::permute(std::span<const uint32_t> perm) const {
  return or_poison(try_permute(perm), ViewError::kBadPermutation);
}
ChipTensor ChipTensor::reshape(std::span<const uint32_t> s) const {
  return or_poison(try_reshape(s), ViewError::kNotContiguous);
}

Expected<ChipTensor> try_make_tensor_strided(uint64_t addr, uint64_t size, std::span<const uint32_t> shapes,
                                             std::span<const uint32_t> strides, uint64_t start_offset, DataType dtype,
                                             bool manual_dep, int32_t version, AddressSpace space) {
  ChipTensor t;
  if (!is_valid_data_type(dtype)) return invalid_argument("make_tensor: dtype value " + std::to_string(static_cast<int>(dtype)) + " is not a DataType");
  if (shapes.empty() || shapes.size() > MAX_TENSOR_DIMS || strides.size() != shapes.size()) {
    return invalid_argument("make_tensor: rank " + std::to_string(shapes.size()) + " outside 1..5 or strides rank " +
                            std::to_string(strides.size()) + " differs");
  }
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
  t.refresh_derived();
  TASKRING_RETURN_IF_ERROR(t.validate().with_context("make_tensor"));
  return t;
}

Expected<ChipTensor> try_make_tensor(uint64_t addr, uint64_t size, std::span<const uint32_t> shapes, DataType dtype,
                                     bool manual_dep, int32_t version, AddressSpace space) {
  uint32_t strides[MAX_TENSOR_DIMS] = {};
  if (shapes.empty() || shapes.size() > MAX_TENSOR_DIMS) {
    return invalid_argument("make_tensor: rank " + std::to_string(shapes.size()) + " outside 1..5");
  }
  uint64_t s = 1;
  for (int i = static_cast<int>(shapes.size()) - 1; i >= 0; --i) {
    if (s > std::numeric_limits<uint32_t>::max()) return invalid_argument("make_tensor: stride overflows u32");
    strides[i] = static_cast<uint32_t>(s);
    s *= shapes[i] == 0 ? 1 : shapes[i];
  }
  return try_make_tensor_strided(addr, size, shapes, std::span<const uint32_t>(strides, shapes.size()), 0, dtype,
                                 manual_dep, version, space);
}

ChipTensor make_tensor_external(const void* ptr, const uint32_t* shapes, uint32_t ndims, DataType dtype,
                                bool manual_dep, int32_t version, AddressSpace space) {
  if (ndims < 1 || ndims > MAX_TENSOR_DIMS || shapes == nullptr) return poisoned(ViewError::kBadRank);
  if (!is_valid_data_type(dtype)) return poisoned(ViewError::kBadDataType);
  uint64_t n = 1;
  for (uint32_t i = 0; i < ndims; ++i) n *= shapes[i];
  auto r = try_make_tensor(reinterpret_cast<uintptr_t>(ptr), n * element_size(dtype),
                           std::span<const uint32_t>(shapes, ndims), dtype, manual_dep, version, space);
  return or_poison(r, ViewError::kStrideOverflow);
}

}  // namespace taskring
