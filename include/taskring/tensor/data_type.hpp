// DataType: element types of tensors, with sizes and names.
//
// The numeric values are the upstream wire values (a u8 in ChipTensor) and
// never change. Both spellings are accepted: upstream's FLOAT32 / BFLOAT16 and
// the short FP32 / BF16.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace taskring {

enum class DataType : uint8_t {
  FLOAT32 = 0,
  FLOAT16 = 1,
  INT32 = 2,
  INT16 = 3,
  INT8 = 4,
  UINT8 = 5,
  BFLOAT16 = 6,
  INT64 = 7,
  UINT64 = 8,
  UINT16 = 9,
  UINT32 = 10,
  BOOL = 11,
  FP32 = FLOAT32,
  FP16 = FLOAT16,
  BF16 = BFLOAT16,
};

inline constexpr int kNumDataTypes = 12;

// Bytes per element; 0 for a value outside the enum.
constexpr size_t element_size(DataType t) {
  switch (t) {
    case DataType::FLOAT32: case DataType::INT32: case DataType::UINT32: return 4;
    case DataType::FLOAT16: case DataType::BFLOAT16: case DataType::INT16: case DataType::UINT16: return 2;
    case DataType::INT8: case DataType::UINT8: case DataType::BOOL: return 1;
    case DataType::INT64: case DataType::UINT64: return 8;
  }
  return 0;
}

constexpr bool is_valid_data_type(DataType t) { return element_size(t) != 0; }

// Short upper-case name: "FP32", "BF16", "INT8", ... ("INVALID" otherwise).
std::string_view data_type_name(DataType t);

// Parses a name in either spelling, any case ("fp32", "FLOAT32", "bf16").
std::optional<DataType> parse_data_type(std::string_view name);

}  // namespace taskring
