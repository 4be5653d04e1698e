// Tiles: float matrices that kernels compute on, and the 2-D views of
// ChipTensor descriptors they are loaded from and stored to.
//
// A kernel sees its tensors as descriptors whose `buffer.addr` it may
// dereference. view_2d() reads such a descriptor as rows x cols with element
// strides; load() converts any tile dtype into a float Tile, store() converts
// back (rules in tile_cast.hpp). For FP32 data, map_f32() / map_f32_strided()
// give Eigen maps over the tensor's memory so that kernels compute in place
// without a copy.
#pragma once

#include <cstdint>

#include <Eigen/Core>

#include "taskring/base/expected.hpp"
#include "taskring/kernels/tile_cast.hpp"
#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::tile {

// Row-major float tile (rows x cols), heap-backed; reuse one across calls to
// avoid allocation on the hot path (resize() to the same size is free).
using Tile = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
// One value per row (rows x 1) and one per column (1 x cols).
using ColVec = Eigen::Matrix<float, Eigen::Dynamic, 1>;
using RowVec = Eigen::Matrix<float, 1, Eigen::Dynamic>;

// FP32 map with unit column stride: vectorises.
using MapF32 = Eigen::Map<Tile, Eigen::Unaligned, Eigen::OuterStride<>>;
using ConstMapF32 = Eigen::Map<const Tile, Eigen::Unaligned, Eigen::OuterStride<>>;
// FP32 map with any strides (outer = row stride, inner = column stride).
using StridedStride = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;
using StridedMapF32 = Eigen::Map<Tile, Eigen::Unaligned, StridedStride>;
using ConstStridedMapF32 = Eigen::Map<const Tile, Eigen::Unaligned, StridedStride>;

// A descriptor read as a 2-D matrix. Strides are in elements.
struct View2D {
  void* data = nullptr;  // element (0, 0)
  DataType dtype = DataType::FP32;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t row_stride = 0;
  int64_t col_stride = 1;

  int64_t numel() const { return rows * cols; }
  size_t elem_size() const { return element_size(dtype); }
  void* at(int64_t r, int64_t c) const {
    return static_cast<char*>(data) + (r * row_stride + c * col_stride) * static_cast<int64_t>(elem_size());
  }
  bool unit_col_stride() const { return col_stride == 1 || cols <= 1; }
};

// Reads `t` as 2-D: rank 1 [n] is 1 x n; rank 2 is itself; rank 3..5 folds
// the leading dims into rows when they are laid out one after another
// (stride[i] == stride[i+1] * shape[i+1]). Errors (INVALID_ARGUMENT, message
// naming the descriptor): validate() fails, null address, leading dims that
// cannot fold.
Expected<View2D> view_2d(const ChipTensor& t);

// As view_2d() and additionally requires is_tile_dtype(t.dtype).
Expected<View2D> tile_view_2d(const ChipTensor& t);

// Eigen maps over FP32 views. Preconditions: v.dtype == FP32; for map_f32
// also v.unit_col_stride().
inline MapF32 map_f32(const View2D& v) {
  return MapF32(static_cast<float*>(v.data), v.rows, v.cols, Eigen::OuterStride<>(v.rows > 1 ? v.row_stride : v.cols));
}
inline ConstMapF32 cmap_f32(const View2D& v) {
  return ConstMapF32(static_cast<const float*>(v.data), v.rows, v.cols,
                     Eigen::OuterStride<>(v.rows > 1 ? v.row_stride : v.cols));
}
inline StridedMapF32 map_f32_strided(const View2D& v) {
  return StridedMapF32(static_cast<float*>(v.data), v.rows, v.cols, StridedStride(v.row_stride, v.col_stride));
}
inline ConstStridedMapF32 cmap_f32_strided(const View2D& v) {
  return ConstStridedMapF32(static_cast<const float*>(v.data), v.rows, v.cols,
                            StridedStride(v.row_stride, v.col_stride));
}

// Loads `v` (any tile dtype) into `dst`, resized to v.rows x v.cols.
void load(const View2D& v, Tile& dst);
// Stores `src` into `v` converting to v.dtype. Precondition: same shape.
void store(const Tile& src, const View2D& v);

// Descriptor forms: view_2d + load / store. store() also fails with
// INVALID_ARGUMENT when the shapes differ.
Status load(const ChipTensor& src, Tile& dst);
Status store(const Tile& src, const ChipTensor& dst);

// Converts every element of `src` into `dst` (same 2-D shape, any tile
// dtypes, any strides) with the rules of tile_cast.hpp. Errors:
// INVALID_ARGUMENT for a shape mismatch or a non-tile dtype.
Status cast(const ChipTensor& src, const ChipTensor& dst);
void cast(const View2D& src, const View2D& dst);

}  // namespace taskring::tile
