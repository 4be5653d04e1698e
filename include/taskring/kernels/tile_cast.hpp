// Scalar conversions among the tile dtypes: FP32, FP16, BF16, INT8, INT32.
//
// Rules (the same for every kernel and for tile::load / tile::store):
//   * to FP16 / BF16: round to nearest, ties to even. Overflow gives ±Inf
//     (FP16 above 65504 after rounding); NaN stays NaN (quiet), Inf stays Inf.
//   * to INT8 / INT32 from a float: round to nearest, ties to even, then
//     saturate to [-128, 127] / [INT32_MIN, INT32_MAX]; ±Inf saturates;
//     NaN becomes 0.
//   * INT32 -> INT8: saturate. INT8 -> anything, FP16/BF16 -> FP32: exact.
//   * INT32 -> FP32 / FP16 / BF16: rounds to nearest even through FP32
//     (exact up to 2^24 in magnitude).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include <Eigen/Core>

#include "taskring/tensor/data_type.hpp"

namespace taskring::tile {

// True for the dtypes tiles load from and store to.
constexpr bool is_tile_dtype(DataType t) {
  return t == DataType::FP32 || t == DataType::FP16 || t == DataType::BF16 || t == DataType::INT8 ||
         t == DataType::INT32;
}

inline float bf16_bits_to_float(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t float_to_bf16_bits(float f) {
  return Eigen::bfloat16(f).value;  // Eigen rounds to nearest even, keeps NaN quiet
}
inline float fp16_bits_to_float(uint16_t b) {
  return static_cast<float>(Eigen::half(Eigen::half_impl::raw_uint16_to_half(b)));
}
inline uint16_t float_to_fp16_bits(float f) {
  return Eigen::half(f).x;  // round to nearest even
}
inline int32_t float_to_int32_sat(float f) {
  if (std::isnan(f)) return 0;
  float r = std::nearbyint(f);  // default rounding mode: ties to even
  if (r >= 2147483648.0f) return INT32_MAX;
  if (r < -2147483648.0f) return INT32_MIN;
  return static_cast<int32_t>(r);
}
inline int8_t float_to_int8_sat(float f) {
  if (std::isnan(f)) return 0;
  float r = std::nearbyint(f);
  if (r > 127.0f) return 127;
  if (r < -128.0f) return -128;
  return static_cast<int8_t>(r);
}
inline int8_t int32_to_int8_sat(int32_t v) { return static_cast<int8_t>(v > 127 ? 127 : (v < -128 ? -128 : v)); }

// Reads element `p` (of `dtype`, one of the tile dtypes) as a float.
inline float read_as_float(const void* p, DataType dtype) {
  switch (dtype) {
    case DataType::FP32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DataType::FP16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return fp16_bits_to_float(b);
    }
    case DataType::BF16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return bf16_bits_to_float(b);
    }
    case DataType::INT8: return static_cast<float>(*static_cast<const int8_t*>(p));
    case DataType::INT32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return static_cast<float>(v);
    }
    default: return 0.0f;
  }
}

// Writes float `v` into element `p` of `dtype` with the rules above.
inline void write_from_float(void* p, DataType dtype, float v) {
  switch (dtype) {
    case DataType::FP32: std::memcpy(p, &v, 4); break;
    case DataType::FP16: {
      uint16_t b = float_to_fp16_bits(v);
      std::memcpy(p, &b, 2);
      break;
    }
    case DataType::BF16: {
      uint16_t b = float_to_bf16_bits(v);
      std::memcpy(p, &b, 2);
      break;
    }
    case DataType::INT8: *static_cast<int8_t*>(p) = float_to_int8_sat(v); break;
    case DataType::INT32: {
      int32_t i = float_to_int32_sat(v);
      std::memcpy(p, &i, 4);
      break;
    }
    default: break;
  }
}

// Converts one element from `src_type` to `dst_type` with the rules above;
// integer-to-integer conversions never pass through float.
inline void convert_element(const void* src, DataType src_type, void* dst, DataType dst_type) {
  if (src_type == DataType::INT32 && (dst_type == DataType::INT32 || dst_type == DataType::INT8)) {
    int32_t v;
    std::memcpy(&v, src, 4);
    if (dst_type == DataType::INT32)
      std::memcpy(dst, &v, 4);
    else
      *static_cast<int8_t*>(dst) = int32_to_int8_sat(v);
    return;
  }
  if (src_type == dst_type) {
    std::memcpy(dst, src, element_size(src_type));
    return;
  }
  write_from_float(dst, dst_type, read_as_float(src, src_type));
}

}  // namespace taskring::tile
