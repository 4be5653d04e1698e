// DataType: element types of tensors, with sizes and names.
//
// The numeric values are the upstream wire values (a u8 in ChipTensor) and
// never change. Both spellings are accepted: upstream's FLOAT32 / BFLOAT16 and
// the short FP32 / BF16.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <type_traits>

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
    case DataType::FLOAT32:
    case DataType::INT32:
    case DataType::UINT32: return 4;
    case DataType::FLOAT16:
    case DataType::BFLOAT16:
    case DataType::INT16:
    case DataType::UINT16: return 2;
    case DataType::INT8:
    case DataType::UINT8:
    case DataType::BOOL: return 1;
    case DataType::INT64:
    case DataType::UINT64: return 8;
  }
  return 0;
}

constexpr bool is_valid_data_type(DataType t) { return element_size(t) != 0; }

// Short upper-case name: "FP32", "BF16", "INT8", ... ("INVALID" otherwise).
constexpr std::string_view data_type_name(DataType t) {
  switch (t) {
    case DataType::FLOAT32: return "FP32";
    case DataType::FLOAT16: return "FP16";
    case DataType::INT32: return "INT32";
    case DataType::INT16: return "INT16";
    case DataType::INT8: return "INT8";
    case DataType::UINT8: return "UINT8";
    case DataType::BFLOAT16: return "BF16";
    case DataType::INT64: return "INT64";
    case DataType::UINT64: return "UINT64";
    case DataType::UINT16: return "UINT16";
    case DataType::UINT32: return "UINT32";
    case DataType::BOOL: return "BOOL";
  }
  return "INVALID";
}

// ---- upstream spellings (exported to the global namespace by
// pto_orchestration_api.h) ----

// Bytes per element (upstream `get_element_size`); 0 outside the enum.
constexpr uint64_t get_element_size(DataType t) { return element_size(t); }

// Upstream's long name: "FLOAT32", "BFLOAT16", "INT8", ... ("UNKNOWN"
// outside the enum). Differs from data_type_name for the float types.
constexpr const char* get_dtype_name(DataType t) {
  switch (t) {
    case DataType::FLOAT32: return "FLOAT32";
    case DataType::FLOAT16: return "FLOAT16";
    case DataType::BFLOAT16: return "BFLOAT16";
    default: break;
  }
  return is_valid_data_type(t) ? data_type_name(t).data() : "UNKNOWN";
}

// The 64-bit scalar slot holding `value`: its bytes in the low end, the rest
// zero (so int32_t(-1) is 0x00000000ffffffff, not sign-extended).
template <typename T>
inline uint64_t to_u64(T value) {
  static_assert(sizeof(T) <= sizeof(uint64_t), "to_u64: the type must fit in 8 bytes");
  static_assert(std::is_trivially_copyable_v<T>, "to_u64: the type must be trivially copyable");
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}

// The value whose bytes are the low sizeof(T) bytes of `bits`.
template <typename T>
inline T from_u64(uint64_t bits) {
  static_assert(sizeof(T) <= sizeof(uint64_t), "from_u64: the type must fit in 8 bytes");
  static_assert(std::is_trivially_copyable_v<T>, "from_u64: the type must be trivially copyable");
  T value;
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}

// Parses a name in either spelling, any case ("fp32", "FLOAT32", "bf16").
std::optional<DataType> parse_data_type(std::string_view name);

}  // namespace taskring
