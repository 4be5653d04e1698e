// ChipTensor: the 128-byte strided tensor descriptor every task argument uses.
//
// A ChipTensor names a byte buffer (`buffer.addr`, `buffer.size`) and a strided
// view into it: `ndims` (1..5) `shapes` and element `strides`, starting at
// `start_offset` elements. The element at coordinates c lives at byte
//   buffer.addr + (start_offset + Σ c[i]·strides[i]) · element_size(dtype).
// Views never copy: they return a new descriptor over the same buffer.
//
// Layout is ABI (static_asserted below) and matches the upstream descriptor
// field for field, so generated orchestration and kernel code reads it as-is.
//
// Errors. The `try_*` view functions return Expected<ChipTensor>. The upstream
// spellings (`view`, `slice`, `transpose`, `permute`, `reshape`) return a
// ChipTensor directly for source compatibility; on malformed input they return
// a *poisoned* descriptor (`is_poisoned()`, `buffer.addr == 0`) that every
// submit rejects with INVALID_ARGS naming the argument and the reason. A
// malformed view is therefore an error, never a wild pointer.
#pragma once

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <type_traits>

#include "taskring/base/expected.hpp"
#include "taskring/tensor/data_type.hpp"
#include "taskring/tensor/task_id.hpp"

namespace taskring {

inline constexpr uint32_t MAX_TENSOR_DIMS = 5;

// Where `buffer.addr` points. DEVICE: already a device address (no staging
// copy). HOST: a host address that the runtime stages to the device.
enum class AddressSpace : uint8_t { HOST = 0, DEVICE = 1 };

// Why a view was rejected; kept in a poisoned descriptor.
enum class ViewError : uint32_t {
  kNone = 0,
  kBadRank,         // ndims outside 1..5, or a rank mismatch between arguments
  kOutOfRange,      // view / slice window leaves the source
  kBadDimension,    // dim index >= ndims
  kBadStep,         // slice step 0
  kBadPermutation,  // permute() argument is not a permutation
  kNotContiguous,   // reshape() of a non-contiguous view
  kNumelMismatch,   // reshape() to a different element count
  kBadDataType,     // dtype outside the enum
  kBufferTooSmall,  // view extent exceeds buffer.size
  kStrideOverflow,  // a stride or offset does not fit its field
  kZeroStride,      // a stride is 0 (descriptor built by hand)
};

std::string_view view_error_name(ViewError e);

namespace tensor_detail {
// Address translation for code that runs as the chip's control processor (an
// orchestration): set per thread by framework_bind_runtime from the bound
// runtime, null elsewhere (addresses are then used as they are). Thread-local
// because several chips may orchestrate concurrently in one process.
//   g_host_view(addr): a pointer the orchestration can dereference for a
//     device address (addr itself when it is not one).
//   g_device_address(p): the device address a host pointer into device
//     memory stands for, 0 when it does not point there.
inline thread_local void* (*g_host_view)(uint64_t addr) = nullptr;
inline thread_local uint64_t (*g_device_address)(const void* p) = nullptr;
}  // namespace tensor_detail

struct TensorBuffer {
  uint64_t addr = 0;  // byte address (host or device, see address_space)
  uint64_t size = 0;  // bytes
};

struct alignas(64) ChipTensor {
  // Cache line 1: what the hot path reads.
  TensorBuffer buffer;                              // 0
  PTO2TaskId owner_task_id;                         // 16: creator task, invalid for external tensors
  uint64_t start_offset = 0;                        // 24: in elements
  int32_t version = 0;                              // 32
  uint32_t ndims = 0;                               // 36
  DataType dtype = DataType::FLOAT32;               // 40
  bool manual_dep = false;                          // 41: skip TensorMap tracking, creator edge only
  bool is_contiguous = false;                       // 42
  AddressSpace address_space = AddressSpace::HOST;  // 43
  uint32_t shapes[MAX_TENSOR_DIMS] = {};            // 44
  // Cache line 2.
  uint64_t extent_elem_cache = 0;          // 64: 1 + Σ (shape-1)·stride, 0 if empty
  uint32_t strides[MAX_TENSOR_DIMS] = {};  // 72: element strides, > 0
  ViewError poison = ViewError::kNone;     // 92: non-zero: produced by a rejected view
  uint8_t reserved[32] = {};               // 96

  // ---- queries ----
  uint64_t numel() const;
  // Bytes per element of dtype.
  size_t elem_size() const { return element_size(dtype); }
  // Bytes from the first to one past the last addressed element.
  uint64_t extent_bytes() const { return extent_elem_cache * elem_size(); }
  // Byte address of element (0, ..., 0).
  uint64_t data_addr() const { return buffer.addr + start_offset * elem_size(); }
  // Host pointer to element (0,...,0). Meaningful only where buffer.addr is a
  // host-visible address (HOST tensors, or a kernel's core-local view).
  template <typename T = void>
  T* data() const {
    return reinterpret_cast<T*>(static_cast<uintptr_t>(data_addr()));
  }
  bool is_poisoned() const { return poison != ViewError::kNone; }
  // Element offset (relative to buffer start) of `coords` (ndims entries).
  uint64_t element_offset(std::span<const uint32_t> coords) const;
  // OK iff the descriptor is well formed: not poisoned, valid dtype, ndims in
  // 1..5, strides > 0, and the addressed extent fits inside buffer.size.
  Status validate() const;

  // ---- views (checked) ----
  // Window of `shapes` starting at `offsets` (one per dim). Out-of-range
  // offsets are allowed only for zero-size windows.
  Expected<ChipTensor> try_view(std::span<const uint32_t> shapes, std::span<const uint32_t> offsets) const;
  // Elements start, start+step, ... < end of dimension `dim`.
  Expected<ChipTensor> try_slice(uint32_t dim, uint32_t start, uint32_t end, uint32_t step = 1) const;
  // Swaps dims d0 and d1.
  Expected<ChipTensor> try_transpose(uint32_t d0 = 0, uint32_t d1 = 1) const;
  // New dim i = old dim perm[i].
  Expected<ChipTensor> try_permute(std::span<const uint32_t> perm) const;
  // Same elements, new shape; only for contiguous views.
  Expected<ChipTensor> try_reshape(std::span<const uint32_t> shapes) const;

  // ---- views (upstream spellings; poisoned descriptor on error) ----
  // As upstream, each sets the result's `manual_dep` to its last argument
  // (default false) instead of inheriting the source's; the try_* forms
  // above inherit it.
  ChipTensor view(std::span<const uint32_t> shapes, std::span<const uint32_t> offsets, bool manual_dep = false) const;
  ChipTensor view(const uint32_t* shapes, const uint32_t* offsets, bool manual_dep = false) const {
    return view(std::span<const uint32_t>(shapes, ndims), std::span<const uint32_t>(offsets, ndims), manual_dep);
  }
  ChipTensor view(std::initializer_list<uint32_t> shapes, std::initializer_list<uint32_t> offsets,
                  bool manual_dep = false) const {
    return view(std::span<const uint32_t>(shapes.begin(), shapes.size()),
                std::span<const uint32_t>(offsets.begin(), offsets.size()), manual_dep);
  }
  ChipTensor slice(uint32_t dim, uint32_t start, uint32_t end, uint32_t step = 1, bool manual_dep = false) const;
  ChipTensor transpose(uint32_t d0 = 0, uint32_t d1 = 1, bool manual_dep = false) const;
  ChipTensor permute(std::span<const uint32_t> perm, bool manual_dep = false) const;
  // Upstream: `order` holds ndims entries.
  ChipTensor permute(const uint32_t* order, bool manual_dep = false) const {
    return permute(std::span<const uint32_t>(order, ndims), manual_dep);
  }
  ChipTensor permute(std::initializer_list<uint32_t> perm, bool manual_dep = false) const {
    return permute(std::span<const uint32_t>(perm.begin(), perm.size()), manual_dep);
  }
  ChipTensor reshape(std::span<const uint32_t> shapes, bool manual_dep = false) const;
  // Upstream: `new_ndims` entries of `shapes`.
  ChipTensor reshape(const uint32_t* shapes, uint32_t new_ndims, bool manual_dep = false) const {
    if (shapes == nullptr) new_ndims = 0;  // reported as a bad rank
    return reshape(std::span<const uint32_t>(shapes, new_ndims), manual_dep);
  }
  ChipTensor reshape(std::initializer_list<uint32_t> shapes, bool manual_dep = false) const {
    return reshape(std::span<const uint32_t>(shapes.begin(), shapes.size()), manual_dep);
  }

  // Upstream `data_as<T>()`: the buffer base (`buffer.addr`, ignoring
  // start_offset, unlike data()) as a T*. In an orchestration a device
  // address is translated to a pointer the orchestration can read, as on the
  // real control processor; make_tensor_external maps such a pointer back.
  template <typename T>
  T* data_as() const {
    void* p = tensor_detail::g_host_view != nullptr ? tensor_detail::g_host_view(buffer.addr)
                                                    : reinterpret_cast<void*>(static_cast<uintptr_t>(buffer.addr));
    return static_cast<T*>(p);
  }

  // Recomputes extent_elem_cache and is_contiguous from shapes/strides.
  void refresh_derived();
  // "FP32[4x8 strides 8,1 +0] @0x... (64 B)" for messages.
  std::string describe() const;
};

static_assert(sizeof(ChipTensor) == 128, "ChipTensor is ABI: exactly 128 bytes");
static_assert(std::is_trivially_copyable_v<ChipTensor>, "ChipTensor is copied as bytes");
static_assert(offsetof(ChipTensor, owner_task_id) == 16);
static_assert(offsetof(ChipTensor, start_offset) == 24);
static_assert(offsetof(ChipTensor, version) == 32);
static_assert(offsetof(ChipTensor, ndims) == 36);
static_assert(offsetof(ChipTensor, dtype) == 40);
static_assert(offsetof(ChipTensor, manual_dep) == 41);
static_assert(offsetof(ChipTensor, is_contiguous) == 42);
static_assert(offsetof(ChipTensor, address_space) == 43);
static_assert(offsetof(ChipTensor, shapes) == 44);
static_assert(offsetof(ChipTensor, extent_elem_cache) == 64);
static_assert(offsetof(ChipTensor, strides) == 72);

// A contiguous row-major tensor over `size` bytes at `addr`. Fails when the
// shape is malformed or numel·elem_size exceeds `size`.
Expected<ChipTensor> try_make_tensor(uint64_t addr, uint64_t size, std::span<const uint32_t> shapes,
                                     DataType dtype = DataType::FLOAT32, bool manual_dep = false, int32_t version = 0,
                                     AddressSpace space = AddressSpace::HOST);

// A strided tensor; `strides` in elements, `start_offset` in elements.
Expected<ChipTensor> try_make_tensor_strided(uint64_t addr, uint64_t size, std::span<const uint32_t> shapes,
                                             std::span<const uint32_t> strides, uint64_t start_offset,
                                             DataType dtype = DataType::FLOAT32, bool manual_dep = false,
                                             int32_t version = 0, AddressSpace space = AddressSpace::HOST);

// Upstream spelling: a contiguous tensor over `ptr` whose buffer is exactly
// numel·elem_size bytes. Poisoned on malformed input. In an orchestration, a
// pointer into device memory (from data_as) becomes the DEVICE tensor it
// stands for, whatever `space` says.
ChipTensor make_tensor_external(const void* ptr, const uint32_t* shapes, uint32_t ndims,
                                DataType dtype = DataType::FLOAT32, bool manual_dep = false, int32_t version = 0,
                                AddressSpace space = AddressSpace::HOST);
inline ChipTensor make_tensor_external(const void* ptr, std::initializer_list<uint32_t> shapes,
                                       DataType dtype = DataType::FLOAT32, bool manual_dep = false, int32_t version = 0,
                                       AddressSpace space = AddressSpace::HOST) {
  return make_tensor_external(ptr, shapes.begin(), static_cast<uint32_t>(shapes.size()), dtype, manual_dep, version,
                              space);
}

}  // namespace taskring

#include "taskring/tensor/chip_tensor_inl.hpp"
