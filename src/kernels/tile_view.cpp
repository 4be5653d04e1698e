#include "taskring/kernels/tile_view.hpp"

#include <string>

namespace taskring::tile {

Expected<View2D> view_2d(const ChipTensor& t) {
  Status s = t.validate();
  if (!s.ok()) return s;
  if (t.buffer.addr == 0) return invalid_argument("null buffer address (" + t.describe() + ")");
  View2D v;
  v.data = t.data<void>();
  v.dtype = t.dtype;
  const uint32_t n = t.ndims;
  v.cols = t.shapes[n - 1];
  v.col_stride = t.strides[n - 1];
  if (n == 1) {
    v.rows = 1;
    v.row_stride = v.cols * v.col_stride;
    return v;
  }
  v.rows = t.shapes[n - 2];
  v.row_stride = t.strides[n - 2];
  for (int i = static_cast<int>(n) - 3; i >= 0; --i) {
    if (t.shapes[i] == 1) continue;
    if (t.strides[i] != static_cast<uint64_t>(v.row_stride) * v.rows && v.rows != 1)
      return invalid_argument("leading dims do not fold into rows (dim " + std::to_string(i) + " stride " +
                              std::to_string(t.strides[i]) + ") in " + t.describe());
    if (v.rows == 1) v.row_stride = t.strides[i];
    v.rows *= t.shapes[i];
  }
  return v;
}

Expected<View2D> tile_view_2d(const ChipTensor& t) {
  Expected<View2D> v = view_2d(t);
  if (!v.ok()) return v;
  if (!is_tile_dtype(t.dtype))
    return invalid_argument("dtype " + std::string(data_type_name(t.dtype)) +
                            " is not a tile dtype (FP32, FP16, BF16, INT8, INT32)");
  return v;
}

namespace {

template <typename Read>
void load_with(const View2D& v, Tile& dst, Read read) {
  const size_t es = v.elem_size();
  for (int64_t r = 0; r < v.rows; ++r) {
    const char* row = static_cast<const char*>(v.data) + r * v.row_stride * static_cast<int64_t>(es);
    float* out = dst.row(r).data();
    for (int64_t c = 0; c < v.cols; ++c) out[c] = read(row + c * v.col_stride * static_cast<int64_t>(es));
  }
}

template <typename Write>
void store_with(const Tile& src, const View2D& v, Write write) {
  const size_t es = v.elem_size();
  for (int64_t r = 0; r < v.rows; ++r) {
    char* row = static_cast<char*>(v.data) + r * v.row_stride * static_cast<int64_t>(es);
    const float* in = src.row(r).data();
    for (int64_t c = 0; c < v.cols; ++c) write(row + c * v.col_stride * static_cast<int64_t>(es), in[c]);
  }
}

}  // namespace

void load(const View2D& v, Tile& dst) {
  dst.resize(v.rows, v.cols);
  switch (v.dtype) {
    case DataType::FP32:
      if (v.unit_col_stride())
        dst = cmap_f32(v);
      else
        dst = cmap_f32_strided(v);
      return;
    case DataType::BF16:
      load_with(v, dst, [](const char* p) {
        uint16_t b;
        std::memcpy(&b, p, 2);
        return bf16_bits_to_float(b);
      });
      return;
    case DataType::FP16:
      load_with(v, dst, [](const char* p) {
        uint16_t b;
        std::memcpy(&b, p, 2);
        return fp16_bits_to_float(b);
      });
      return;
    case DataType::INT8:
      load_with(v, dst, [](const char* p) { return static_cast<float>(*reinterpret_cast<const int8_t*>(p)); });
      return;
    case DataType::INT32:
      load_with(v, dst, [](const char* p) {
        int32_t i;
        std::memcpy(&i, p, 4);
        return static_cast<float>(i);
      });
      return;
    default: return;
  }
}

void store(const Tile& src, const View2D& v) {
  switch (v.dtype) {
    case DataType::FP32:
      if (v.unit_col_stride())
        map_f32(v) = src;
      else
        map_f32_strided(v) = src;
      return;
    case DataType::BF16:
      store_with(src, v, [](char* p, float f) {
        uint16_t b = float_to_bf16_bits(f);
        std::memcpy(p, &b, 2);
      });
      return;
    case DataType::FP16:
      store_with(src, v, [](char* p, float f) {
        uint16_t b = float_to_fp16_bits(f);
        std::memcpy(p, &b, 2);
      });
      return;
    case DataType::INT8:
      store_with(src, v, [](char* p, float f) { *reinterpret_cast<int8_t*>(p) = float_to_int8_sat(f); });
      return;
    case DataType::INT32:
      store_with(src, v, [](char* p, float f) {
        int32_t i = float_to_int32_sat(f);
        std::memcpy(p, &i, 4);
      });
      return;
    default: return;
  }
}

Status load(const ChipTensor& src, Tile& dst) {
  TASKRING_ASSIGN_OR_RETURN(View2D v, tile_view_2d(src));
  load(v, dst);
  return Status::Ok();
}

Status store(const Tile& src, const ChipTensor& dst) {
  TASKRING_ASSIGN_OR_RETURN(View2D v, tile_view_2d(dst));
  if (v.rows != src.rows() || v.cols != src.cols())
    return invalid_argument("store: tile is " + std::to_string(src.rows()) + "x" + std::to_string(src.cols()) +
                            ", destination is " + std::to_string(v.rows) + "x" + std::to_string(v.cols));
  store(src, v);
  return Status::Ok();
}

void cast(const View2D& src, const View2D& dst) {
  const int64_t ses = static_cast<int64_t>(src.elem_size());
  const int64_t des = static_cast<int64_t>(dst.elem_size());
  for (int64_t r = 0; r < src.rows; ++r) {
    const char* s = static_cast<const char*>(src.data) + r * src.row_stride * ses;
    char* d = static_cast<char*>(dst.data) + r * dst.row_stride * des;
    for (int64_t c = 0; c < src.cols; ++c)
      convert_element(s + c * src.col_stride * ses, src.dtype, d + c * dst.col_stride * des, dst.dtype);
  }
}

Status cast(const ChipTensor& src, const ChipTensor& dst) {
  TASKRING_ASSIGN_OR_RETURN(View2D s, tile_view_2d(src));
  TASKRING_ASSIGN_OR_RETURN(View2D d, tile_view_2d(dst));
  if (s.rows != d.rows || s.cols != d.cols)
    return invalid_argument("cast: source is " + std::to_string(s.rows) + "x" + std::to_string(s.cols) +
                            ", destination is " + std::to_string(d.rows) + "x" + std::to_string(d.cols));
  cast(s, d);
  return Status::Ok();
}

}  // namespace taskring::tile
