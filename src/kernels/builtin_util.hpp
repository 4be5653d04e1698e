// Shared pieces of the built-in kernels (private to src/kernels).
#pragma once

#include "taskring/kernels/kernel_args.hpp"
#include "taskring/kernels/tile.hpp"

namespace taskring::kernels::detail {

inline bool same_shape(const tile::View2D& a, const tile::View2D& b) { return a.rows == b.rows && a.cols == b.cols; }

// Fails "<role_b> is RxC, <role_a> is RxC" unless the shapes agree.
inline bool check_same_shape(const KernelArgs& k, const tile::View2D& a, const char* ra, const tile::View2D& b,
                             const char* rb) {
  if (same_shape(a, b)) return true;
  return k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "%s is %lldx%lld but %s is %lldx%lld", rb,
                static_cast<long long>(b.rows), static_cast<long long>(b.cols), ra, static_cast<long long>(a.rows),
                static_cast<long long>(a.cols));
}

inline bool is_float_dtype(DataType t) { return t == DataType::FP32 || t == DataType::BF16 || t == DataType::FP16; }

inline bool check_float(const KernelArgs& k, const tile::View2D& v, const char* role) {
  if (is_float_dtype(v.dtype)) return true;
  return k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "%s dtype %s is not FP32/BF16/FP16", role,
                std::string(data_type_name(v.dtype)).c_str());
}

inline bool check_dtype(const KernelArgs& k, const tile::View2D& v, const char* role, DataType want) {
  if (v.dtype == want) return true;
  return k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "%s dtype %s, expected %s", role,
                std::string(data_type_name(v.dtype)).c_str(), std::string(data_type_name(want)).c_str());
}

// An FP32 view whose rows are contiguous arrays (kernels then compute on the
// tensor memory through vec_math, without a tile copy).
inline bool flat_f32(const tile::View2D& v) { return v.dtype == DataType::FP32 && v.unit_col_stride(); }

// Per-thread scratch tiles for kernels that load/compute/store; thread_local
// because kernels run concurrently on core threads and must not allocate
// per call.
struct Scratch {
  tile::Tile t[4];
  tile::ColVec v[3];
};
inline Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

}  // namespace taskring::kernels::detail
